"""tayal_ch7_table74: the (C, mu) selection of the feature-scaling methods.

References: the selected grid point follows from the stated rule (the smallest mean CV
error; ties to the largest mu, then the smallest C) on errors set by the test itself; the
constant classifier after a fit without features is the majority class by construction.
"""

import numpy as np
import pytest

from conicml.reproductions import tayal_ch7_table74 as t74


def _data(n=60, d=4, seed=0):
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 3 == 0, 1.0, -1.0)  # majority -1, in every block
    X = rng.normal(size=(n, d))
    X[:, 0] += 1.5 * y  # one informative feature
    return X, y


def test_path_goes_constant_after_a_fit_without_features():
    X, y = _data()
    out = t74._path(X[:40], y[:40], X[40:], "full", 1.0, [2.0**-4, 2.0**12, 2.0**14],
                    None, np.inf)
    assert len(out) == 3
    r0, pred0 = out[0]
    assert r0["support"].any() and pred0.shape == (20,)
    # mu = 2^12 leaves z ~ 1e-11 (K_z constant): that fit and every larger mu are the
    # constant classifier, the majority class, with no feature
    for r, pred in out[1:]:
        assert not r["support"].any() and r["label"] == "constant"
        np.testing.assert_array_equal(pred, -np.ones(20))


def test_selection_ties_go_to_the_largest_mu_then_the_smallest_C(monkeypatch):
    X, y = _data()
    seen = []

    def fake_path(Xtr, ytr, Xte, method, C, mus, fit_limit, deadline, z_start=None):
        seen.append((C, len(mus)))
        # every grid point predicts the majority class (the same CV error), except the
        # largest mu at C = 1/2, which predicts the minority class (worse)
        preds = [-np.ones(len(Xte)) for _ in mus]
        if C == 0.5 and len(mus) == 3:
            preds[-1] = np.ones(len(Xte))
        model = {"support": np.ones(Xtr.shape[1], bool), "label": "minimum"}
        return [(model, p) for p in preds]

    monkeypatch.setattr(t74, "_path", fake_path)
    r = t74.fs_run(X, y, 0, "full", [-1, 1], [-2, 0, 2], 2, 60.0, None)
    # the tied points: all but (1/2, 2^2); the largest tied mu is 2^2, at C = 2
    assert (r["C"], r["mu"]) == (2.0, 4.0)
    # the refit goes up the path to the selected mu only; then the C = mu = 1 ablation
    assert seen[-2:] == [(2.0, 3), (1.0, 1)]


def test_selection_needs_a_grid_point_that_did_not_fail(monkeypatch):
    X, y = _data()
    monkeypatch.setattr(t74, "_path", lambda Xtr, ytr, Xte, *a: [(None, None)] * len(a[2]))
    with pytest.raises(RuntimeError, match="every grid point failed"):
        t74.fs_run(X, y, 0, "full", [0], [0, 2], 2, 60.0, None)


def test_z0_ablation_starts_every_path_at_the_inverse_svm_width(monkeypatch):
    X, y = _data()
    starts = []

    def fake_path(Xtr, ytr, Xte, method, C, mus, fit_limit, deadline, z_start=None):
        starts.append(None if z_start is None else z_start.copy())
        model = {"support": np.ones(Xtr.shape[1], bool), "label": "minimum"}
        return [(model, -np.ones(len(Xte))) for _ in mus]

    monkeypatch.setattr(t74, "_path", fake_path)
    rows = {"SVM": [("ok", {"sigma": 4.0}), ("error", "x"), ("ok", {"sigma": 0.5})]}
    tasks = t74._z0_tasks(X, y, rows, t74.METHODS, ([0], [0], 2, 60.0, None), None)
    # AO-II with its selection, the other two at C = mu = 1; the failed split is skipped
    assert [t[0] for t in tasks].count("AO-II, z0 = 1/sigma (ablation)") == 2
    assert len(tasks) == 6
    for label, fn, args in tasks:
        starts.clear()
        fn(*args)
        scale = 0.25 if args[2] == 0 else 2.0  # 1 / sigma of the split's SVM
        assert starts and all(np.allclose(z, scale) and z.shape == (4,) for z in starts)
    # the default selection starts from z^0 = 1 (the thesis, section 7.5): z_start None
    starts.clear()
    t74.fs_run(X, y, 0, "ao2", [0], [0], 2, 60.0, None)
    assert starts and all(z is None for z in starts)


def test_gap_is_the_difference_in_combined_standard_errors():
    # closed form: (8.5 - 5.3) / sqrt(1.6^2 + 0.4^2)
    assert t74._gap(8.5, 1.6, "5.3±0.4") == pytest.approx(3.2 / np.hypot(1.6, 0.4))
    assert t74._gap(8.5, 1.6, "") is None  # no thesis spread printed
    assert t74._gap(8.5, float("nan"), "5.3±0.4") is None  # one split: no s.e.
