"""The literal Algorithms 3 and 4 of Rodriguez Lujan's Fig 4.4 ablation.

Reference: Proposition 4.1 (corrected, up to a positive scale) — KFDA and KQPFS give the
same direction, and both equal the specialized ``kfda-closed-form`` solver's direction.
"""

import numpy as np

import conicml as cm
from conicml.formulations import kfda
from conicml.reproductions.rodriguez_lujan_fig_4_4 import algorithm_3, algorithm_4


def _cos(a, b):
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_literal_algorithms_3_and_4_give_the_closed_form_direction():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    y = np.where(np.linalg.norm(X, axis=1) < 1.5, 1.0, -1.0)  # unbalanced, both classes
    prog = kfda.kfda(X, y, 1e-3, gamma=0.5)
    K = prog.data["fisher"].gram
    ref = cm.solve(prog, "kfda-closed-form").values["alpha"]
    a3, a4 = algorithm_3(K, y, 1e-3), algorithm_4(K, y, 1e-3)
    # the directions agree to the conditioning of W_mu (mu = 1e-3), not bitwise
    assert _cos(a3, ref) > 1 - 1e-6  # same sign: Algorithm 3 solves W^-1 (m+ - m-)
    assert _cos(a4, ref) > 1 - 1e-6  # F_K = (2 N+ N- / N) d, a positive multiple
