"""Formulations: one module per family of learners.

A formulation turns data and hyper-parameters into a :class:`~conicml.Program`.
"""

from . import svm  # noqa: F401

__all__ = ["svm"]
