"""Data versions shared by the seed 004 (Huang) reproduction entries.

The thesis's "Heart-disease" is read as the Statlog heart data (270 x 13): its class
balance (theta of about 0.44-0.45 in Tables 3.1/3.2) matches Statlog's 120/270 better
than Cleveland's 137/297; Cleveland (297 x 13 after dropping the rows with a missing
value) is the other version, measured as an ablation where an entry does.
"""

from __future__ import annotations

import numpy as np

import conicml as cm

#: an entry's heart name -> the bundled data set it loads
HEART_VERSIONS = {"heart": "statlog_heart", "statlog": "statlog_heart", "cleveland": "heart"}


def load_huang(name: str) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of a data set of the thesis by an entry's name: ``heart`` (and
    ``statlog``) is Statlog heart, ``cleveland`` the Cleveland version, any other name
    the bundled data set of that name."""
    return cm.datasets.load(HEART_VERSIONS.get(name, name))
