"""conicml.plot: every figure renders headless (Agg) with the artists it promises."""

import numpy as np
import pytest

import conicml as cm

pytest.importorskip("matplotlib")

from conicml import plot  # noqa: E402
from conicml.estimators import (  # noqa: E402
    BMPMClassifier,
    ChanceConstrainedClassifier,
    ClusterSOCPClassifier,
    M4Classifier,
    MPMClassifier,
    SVMClassifier,
)


@pytest.fixture(scope="module")
def blobs():
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal([1.5, 1.0], [1.0, 0.6], (60, 2)),
              rng.normal([-1.5, -1.0], [0.7, 1.0], (60, 2))]
    y = np.r_[np.ones(60), -np.ones(60)]
    return X, y


def _render(ax, tmp_path, name):
    path = tmp_path / f"{name}.png"
    ax.figure.savefig(path, dpi=60)
    assert path.stat().st_size > 2_000  # a real raster, not an empty file
    return path


@pytest.mark.parametrize("make, lines", [
    (lambda: MPMClassifier(), 2),                    # two worst-case ellipsoids
    (lambda: BMPMClassifier(beta0=0.5), 2),
    (lambda: ChanceConstrainedClassifier(error_pos=0.2, error_neg=0.2), 2),
    (lambda: M4Classifier(C=1.0), 2),                # two class-wise margins
    (lambda: SVMClassifier(kernel="linear"), 2),     # f = +1 and f = -1
    (lambda: ClusterSOCPClassifier(n_clusters=3), 6),  # one circle per cluster
])
def test_decision_boundary_draws_the_certificate(blobs, tmp_path, make, lines):
    X, y = blobs
    est = make().fit(X, y)
    ax = plot.plot_decision_boundary(est, X, y)
    assert len(ax.collections) >= 3  # regions, boundary, scatter
    assert len(ax.lines) >= lines
    _render(ax, tmp_path, type(est).__name__)


def test_roc_with_the_mpm_point_and_the_bmpm_sweep(blobs, tmp_path):
    X, y = blobs
    est = MPMClassifier().fit(X, y)
    sweep = cm.estimators.bmpm_roc(X, y, betas=[0.2, 0.5, 0.8])
    # the certificate is a bound: each BMPM hyperplane's empirical TPR is at least its alpha
    # on the data its moments came from is not guaranteed, but alpha is increasing as
    # beta0 decreases (the trade-off of seed 004 Sec. 5.4)
    assert np.all(np.diff(sweep["alpha"]) < 0)
    ax = plot.plot_roc(est, X, y, bmpm_sweep=sweep)
    assert len(ax.lines) == 5  # curve, certified point, worst-case curve, empirical, diagonal
    _render(ax, tmp_path, "roc")


def test_convergence_from_a_recorder(tmp_path):
    X, y = cm.datasets.twonorm(80, dim=3, random_state=1)
    prog = cm.formulations.svm.soft_margin(X, y, C=1.0, kernel="rbf", form="dual")
    rec = cm.solvers.Recorder()
    cm.solve(prog, "smo", callback=rec)
    assert len(rec) > 5
    ax = plot.plot_convergence(rec)
    assert len(ax.lines) >= 1
    _render(ax, tmp_path, "convergence")
    stopped = cm.solve(prog, "smo", callback=cm.solvers.Recorder(max_iter=3))
    assert stopped.status is cm.Status.USER_LIMIT and stopped.iterations == 3


def test_comparison_figure(tmp_path):
    X, y = cm.datasets.twonorm(60, dim=3, random_state=2)
    comp = cm.compare(cm.formulations.svm.soft_margin(X, y, C=1.0, form="dual"),
                      ["clarabel", "ecos", "smo"])
    ax = plot.plot_comparison(comp)
    assert len(ax.lines) >= 3
    _render(ax, tmp_path, "compare")


def test_bad_inputs_name_what_is_needed(blobs):
    X, y = blobs
    est = MPMClassifier().fit(X, y)
    with pytest.raises(ValueError, match=r"shape \(n, 2\)"):
        plot.plot_decision_boundary(est, np.c_[X, X[:, :1]], y)
    with pytest.raises(ValueError, match="fitted conicml estimator"):
        plot.plot_decision_boundary(MPMClassifier(), X, y)
    with pytest.raises(ValueError, match="kernel='linear'"):
        plot.plot_decision_boundary(MPMClassifier(kernel="rbf").fit(X, y), X, y)
    with pytest.raises(ValueError, match="Comparison"):
        plot.plot_comparison("not a comparison")
    with pytest.raises(ValueError, match="Recorder"):
        plot.plot_convergence([])


def test_plot_table_draws_a_one_row_table_and_refuses_one_without_numbers():
    # a --quick reproduction has one row (seed 003 Table 5.1: "11.3 (0.667)" cells); its
    # figure used to fail with "no numeric column"
    header = ["S-Size", "CBOR-Iter s (MZE)", "SMO-OR s (MZE)", "note"]
    ax = plot.plot_table(header, [["2,000", "11.3 (0.667)", "2.8 (0.636)", "-"]])
    assert len(ax.get_lines()) == 2
    assert [line.get_ydata()[0] for line in ax.get_lines()] == [11.3, 2.8]
    with pytest.raises(ValueError, match="no numeric column"):
        plot.plot_table(header, [["2,000", "-", "n/a", "-"]])


def test_plot_bmpm_roc_is_a_deprecated_alias(blobs):
    X, y = blobs
    with pytest.warns(FutureWarning, match="moved to conicml.estimators.bmpm_roc"):
        old = plot.bmpm_roc(X, y, betas=[0.5])
    new = cm.estimators.bmpm_roc(X, y, betas=[0.5])
    np.testing.assert_allclose(old["alpha"], new["alpha"], rtol=1e-9)
