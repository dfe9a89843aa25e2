"""The typed contract between a program kind and its solvers.

A formulation puts the structured data of a program into small frozen
dataclasses defined here (one module per family), and a specialized solver
reads those and nothing else: no solver imports a formulation module or
touches a :class:`~conicml.Program`'s private state. The existing
:class:`~conicml.Kernel` object is the model: a value that knows how to give
what a solver needs (kernel columns, a factor) without the solver knowing how
it was built.

``docs/architecture.md`` lists, per kind, the contract object a program's
``data`` carries and the solvers that consume it.
"""
