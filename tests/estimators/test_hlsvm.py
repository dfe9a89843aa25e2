"""HLSVMClassifier (seed 001 ch. 5): scikit-learn contract, Algorithm 6, pruning (A17),
routing, the weights (5.3), the text dump and bad input."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_moons
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

import conicml as cm
from conicml.estimators import HLSVMClassifier, export_text
from conicml.estimators._hlsvm_tree import FrozenTree, cost_complexity_sequence, entropy
from conicml.exceptions import ConicMLWarning, SolverError


@parametrize_with_checks([
    HLSVMClassifier(max_iter=300, node_solver="weighted-pegasos", random_state=0),
    HLSVMClassifier(node_solver="clarabel", pruning_fraction=0.0, standardize=False),
    HLSVMClassifier(random_state=0),  # the defaults: standardised, "auto" node solver
])
def test_sklearn_contract(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def moons():
    return make_moons(600, noise=0.2, random_state=0)


# ---- Algorithm 6 ------------------------------------------------------------------------------

def test_entropy_is_the_binary_entropy_of_unweighted_counts():
    # closed forms: pure node 0, balanced node 1 bit, 1:3 -> 0.811278...
    assert entropy(5, 0) == 0.0 and entropy(0, 7) == 0.0
    assert entropy(4, 4) == pytest.approx(1.0)
    assert entropy(1, 3) == pytest.approx(-(0.25 * np.log2(0.25) + 0.75 * np.log2(0.75)))


def test_delta_one_gives_a_single_leaf(moons):
    X, y = moons
    with pytest.warns(ConvergenceWarning, match="constant score.*single leaf"):
        est = HLSVMClassifier(delta=1.0, pruning_fraction=0.0, node_solver="clarabel",
                              class_weight=None).fit(X, y)
    # |S|/N = 1 <= delta: the root is a leaf labelled by the unweighted majority
    assert est.n_hyperplanes_ == 0 and est.n_leaves_ == 1
    counts = np.bincount(y)
    majority = est.classes_[int(counts[1] >= counts[0])]  # (2.37), a tie goes to classes_[1]
    assert np.all(est.predict(X) == majority)


def test_default_delta_follows_the_thesis(moons):
    X, y = moons
    est = HLSVMClassifier(pruning_fraction=0.0, node_solver="clarabel", lam=1e-3).fit(X, y)
    assert est.delta_ == pytest.approx(1e-2)  # 10^-floor(log10 600)


def test_tree_with_exact_node_solver_and_routing(moons):
    X, y = moons
    est = HLSVMClassifier(lam=1e-3, pruning_fraction=0.0, node_solver="clarabel").fit(X, y)
    assert est.score(X, y) > 0.9  # piecewise linear boundary on the moons
    # routing by hand through coef_/intercept_ equals predict; the cost is counted
    tree = est.tree_
    for i in range(0, 600, 37):
        k, count = 0, 0
        while tree.left[k] >= 0:
            k = tree.left[k] if X[i] @ tree.weights[k] + tree.bias[k] <= 0 else tree.right[k]
            count += 1
        assert est.classes_[int(tree.n_pos[k] >= tree.n_neg[k])] == est.predict(X[i:i + 1])[0]
        assert est.hyperplanes_evaluated(X[i:i + 1])[0] == count
    # the batch routing (vectorised node by node) reaches the hand-routed leaf of every row
    hand = []
    for x in X:
        k = 0
        while tree.left[k] >= 0:
            k = tree.left[k] if x @ tree.weights[k] + tree.bias[k] <= 0 else tree.right[k]
        hand.append(k)
    np.testing.assert_array_equal(est.apply(X), hand)
    counts = est.hyperplanes_evaluated(X)
    assert est.max_hyperplanes_ == counts.max() <= est.max_depth_
    assert est.mean_hyperplanes_ == pytest.approx(counts.mean())
    assert est.coef_.shape == (est.n_hyperplanes_, 2)
    # every split lowered the unweighted entropy (else the node would be a leaf)
    for k in np.flatnonzero(tree.left >= 0):
        lk, rk = tree.left[k], tree.right[k]
        nl, nr = tree.n_pos[lk] + tree.n_neg[lk], tree.n_pos[rk] + tree.n_neg[rk]
        child = (nl * entropy(tree.n_pos[lk], tree.n_neg[lk])
                 + nr * entropy(tree.n_pos[rk], tree.n_neg[rk])) / (nl + nr)
        assert child < entropy(tree.n_pos[k], tree.n_neg[k])


def test_weighted_pegasos_tree_matches_the_exact_root(moons):
    # the root hyperplane of Weighted-Pegasos agrees with Clarabel's on the same node problem
    X, y = moons
    exact = HLSVMClassifier(lam=1e-2, pruning_fraction=0.0, delta=0.5,
                            node_solver="clarabel").fit(X, y)
    # node_solver named: with "auto" these small nodes went to clarabel and the options
    # were never used (the comparison was clarabel against itself)
    peg = HLSVMClassifier(lam=1e-2, pruning_fraction=0.0, delta=0.5, max_iter=100_000, tol=None,
                          node_solver="weighted-pegasos",
                          node_solver_options={"tol": 1e-4, "bias": "exact"},
                          random_state=0).fit(X, y)
    assert set(peg.node_solvers_) == {"weighted-pegasos"}
    w0, w1 = exact.tree_.weights[0], peg.tree_.weights[0]
    assert np.linalg.norm(w1 - w0) <= 0.05 * np.linalg.norm(w0)
    assert abs(peg.tree_.bias[0] - exact.tree_.bias[0]) <= 0.05 * np.linalg.norm(w0)


def test_weights_53_stop_the_majority_collapse():
    # Fig 5.4 in small: 8:1 imbalance, small lambda. Uniform weights put (almost) everything on
    # the majority side; the balancing weights (5.3) give a split that errs on both classes alike
    rng = np.random.default_rng(0)
    Xp = rng.normal([0.0, 0.0], 1.0, size=(800, 2))
    Xn = rng.normal([2.0, 0.0], 1.0, size=(100, 2))
    X, y = np.vstack([Xp, Xn]), np.r_[np.ones(800), -np.ones(100)]
    from conicml.formulations import svm
    lam = 1e-4
    # uniform weights nu_i = 1/N in (C.1): c_i = nu_i / (lambda N) = 1 / (lambda N^2)
    uniform = svm.soft_margin(X, y, C=1 / (lam * 900**2), form="primal")
    wu = uniform.decode(cm.solve(uniform, "clarabel"))
    err_neg_uniform = np.mean(np.sign(X[y < 0] @ wu["w"] + wu["b"]) > 0)
    est = HLSVMClassifier(lam=lam, pruning_fraction=0.0, delta=0.9,
                          node_solver="clarabel").fit(X, y)
    f = X @ est.tree_.weights[0] + est.tree_.bias[0]
    right_is_pos = est.tree_.n_pos[est.tree_.right[0]] > est.tree_.n_neg[est.tree_.right[0]]
    pred_pos = (f > 0) == right_is_pos
    err_pos, err_neg = np.mean(~pred_pos[y > 0]), np.mean(pred_pos[y < 0])
    assert err_neg_uniform > 0.5  # the minority is mostly lost without weights
    assert err_pos < 0.3 and err_neg < 0.3


# ---- cost-complexity pruning (A17) ------------------------------------------------------------

def _hand_tree():
    # root 0 -> (1, 2); 1 -> (3, 4); 2 -> (5, 6); (n_pos, n_neg) per node, R = leaf errors:
    # 3 (38, 0) R=0, 4 (2, 10) R=2, 1 (40, 10) R=10, R(T_1) = 2, g(1) = (10 - 2)/1 = 8;
    # 5 (2, 48) R=2, 6 (10, 2) R=2, 2 (12, 50) R=12, R(T_2) = 4, g(2) = (12 - 4)/1 = 8 (a tie);
    # 0 (52, 60) R=52, R(T_0) = 6, g(0) = 46/3. Both weakest links collapse at alpha = 8;
    # then g(0) = (52 - 22)/1 = 30
    left = np.array([1, 3, 5, -1, -1, -1, -1])
    right = np.array([2, 4, 6, -1, -1, -1, -1])
    n_pos = np.array([52, 40, 12, 38, 2, 2, 10])
    n_neg = np.array([60, 10, 50, 0, 10, 48, 2])
    return FrozenTree(weights=np.zeros((7, 1)), bias=np.zeros(7), left=left, right=right,
                      n_pos=n_pos, n_neg=n_neg, depth=np.array([0, 1, 1, 2, 2, 2, 2]))


def test_pruning_sequence_collapses_all_weakest_links_at_once():
    masks, alphas = cost_complexity_sequence(_hand_tree())
    assert alphas == pytest.approx([0.0, 8.0, 30.0])
    reach = [np.flatnonzero(~m).tolist() for m in masks]
    assert [r for r in reach] == [[0, 1, 2], [0], []]


def test_T0_collapses_splits_that_do_not_reduce_R():
    tree = _hand_tree()
    # children of node 1 become (30, 5) and (10, 5): R(T_1) = 10 = R(1), so T_0 collapses 1
    tree.n_pos[3], tree.n_neg[3] = 30, 5
    tree.n_pos[4], tree.n_neg[4] = 10, 5
    masks, _ = cost_complexity_sequence(tree)
    assert masks[0][1] and not masks[0][2] and not masks[0][0]


def test_pruning_helps_on_noisy_data():
    X, y = make_moons(500, noise=0.35, random_state=1)
    Xt, yt = make_moons(2000, noise=0.35, random_state=2)
    full = HLSVMClassifier(lam=1e-4, pruning_fraction=0.0, node_solver="clarabel",
                           delta=1e-2).fit(X, y)
    pruned = HLSVMClassifier(lam=1e-4, pruning_fraction=0.2, node_solver="clarabel",
                             delta=1e-2, random_state=0).fit(X, y)
    assert pruned.n_hyperplanes_ < pruned.n_hyperplanes_unpruned_
    assert pruned.n_hyperplanes_ < full.n_hyperplanes_
    assert pruned.score(Xt, yt) >= full.score(Xt, yt) - 0.01
    assert len(pruned.pruning_path_) >= 2


def test_export_text(moons):
    X, y = moons
    est = HLSVMClassifier(lam=1e-3, pruning_fraction=0.0, node_solver="clarabel",
                          delta=0.2).fit(X, y)
    text = export_text(est, feature_names=["a", "b"], decimals=2)
    assert text.count("<= 0") == est.n_hyperplanes_ == text.count(">  0")
    assert text.count("class:") == est.n_leaves_
    assert "*a" in text and "*b" in text
    with pytest.raises(ValueError, match="feature_names"):
        export_text(est, feature_names=["a"])


# ---- bad input --------------------------------------------------------------------------------

@pytest.mark.parametrize("params,name", [
    ({"lam": 0.0}, "lam"), ({"lam": -1.0}, "lam"),
    ({"pruning_fraction": 1.0}, "pruning_fraction"),
    ({"pruning_fraction": -0.1}, "pruning_fraction"),
    ({"delta": 0.0}, "delta"), ({"delta": 1.5}, "delta"),
    ({"batch_size": 0}, "batch_size"), ({"batch_size": 10_000}, "batch_size"),
    ({"max_iter": 0}, "max_iter"), ({"tau": -1.0}, "tau"),
])
def test_bad_parameters_raise_value_error_naming_them(params, name, moons):
    X, y = moons
    with pytest.raises(ValueError, match=name):
        HLSVMClassifier(**params).fit(X, y)


def test_bad_data_raise_value_error(moons):
    X, y = moons
    with pytest.raises(ValueError, match="two classes"):
        HLSVMClassifier().fit(X, np.zeros(X.shape[0]))
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        HLSVMClassifier().fit(Xn, y)
    Xn[3, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        HLSVMClassifier().fit(Xn, y)


def test_node_solver_that_does_not_accept_the_primal_kind(moons):
    X, y = moons
    with pytest.raises(SolverError, match="it accepts qp.svm.dual"):
        HLSVMClassifier(node_solver="smo").fit(X, y)


# ---- defaults that converge (issue 9): standardisation, node_solver="auto" ----------------------

def test_standardize_makes_the_tree_invariant_to_feature_scale(moons):
    # closed form: on standardised features an affine rescaling x -> s x + t of the inputs
    # changes nothing but the raw hyperplanes, which become (w / s, b - (w / s)^T t)
    X, y = moons
    s, t = np.array([1e3, 1e-2]), np.array([-50.0, 7.0])
    kw = {"lam": 1e-3, "pruning_fraction": 0.0, "node_solver": "clarabel", "delta": 0.05}
    a = HLSVMClassifier(**kw).fit(X, y)
    b = HLSVMClassifier(**kw).fit(X * s + t, y)
    assert a.n_hyperplanes_ == b.n_hyperplanes_ >= 2
    np.testing.assert_array_equal(a.predict(X), b.predict(X * s + t))
    np.testing.assert_allclose(b.coef_ * s, a.coef_, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(b.intercept_ + b.coef_ @ t, a.intercept_, rtol=1e-4, atol=1e-6)
    # without standardisation the same data is another model (the thesis's raw setting)
    raw = HLSVMClassifier(standardize=False, **kw).fit(X * s + t, y)
    assert not np.allclose(raw.coef_[0] * s, a.coef_[0], rtol=1e-2)


def test_auto_node_solver_is_dcd_certified(monkeypatch):
    pytest.importorskip("numba")
    monkeypatch.setenv("CONICML_ENGINE", "numba")  # dcd is "auto" with its compiled loop
    X, y = make_moons(4400, noise=0.25, random_state=0)
    est = HLSVMClassifier(pruning_fraction=0.0, delta=0.05, random_state=0).fit(X, y)
    assert set(est.node_solvers_) == {"dcd"} and est.node_solvers_["dcd"] >= 3
    assert set(est.node_statuses_) == {"optimal"}  # certified duality gap <= 1e-3
    # the root against the exact interior point on the same node program (clarabel)
    exact = HLSVMClassifier(pruning_fraction=0.0, delta=0.9, node_solver="clarabel").fit(X, y)
    root = HLSVMClassifier(pruning_fraction=0.0, delta=0.9, random_state=0).fit(X, y)
    assert np.mean(root.predict(X) == exact.predict(X)) >= 0.99
    # node_solver_options go to dcd
    HLSVMClassifier(pruning_fraction=0.0, node_solver_options={"tol": 1e-6}).fit(X[:500], y[:500])
    # max_iter = 1 epoch cannot certify the 4 400-sample root: "auto" re-solves it exactly
    est = HLSVMClassifier(pruning_fraction=0.0, delta=0.9, random_state=0,
                          node_solver_options={"max_iter": 1, "tol": 1e-9}).fit(X, y)
    assert est.node_solvers_ == {"dcd->clarabel": 1}  # the root only
    assert est.node_statuses_ == {"optimal": 1}


def test_auto_on_the_numpy_engine_is_exact_on_small_nodes_and_pegasos_on_large_ones(
        monkeypatch):
    monkeypatch.setenv("CONICML_ENGINE", "numpy")
    X, y = make_moons(4400, noise=0.25, random_state=0)
    est = HLSVMClassifier(pruning_fraction=0.0, delta=0.05, random_state=0).fit(X, y)
    # the root (4 400 > 2 000 samples) is a Weighted-Pegasos node (here it certifies, or
    # stops at T and is re-solved exactly: d = 2 keeps it under the fallback size)
    assert est.node_solvers_.get("weighted-pegasos", 0) \
        + est.node_solvers_.get("weighted-pegasos->clarabel", 0) >= 1
    assert est.node_solvers_.get("clarabel", 0) >= 1  # nodes of <= 2 000 samples
    assert set(est.node_statuses_) <= {"optimal", "optimal_inaccurate"}
    small = HLSVMClassifier(pruning_fraction=0.0, random_state=0).fit(X[:500], y[:500])
    assert set(small.node_solvers_) == {"clarabel"}
    # node_solver_options go to the Pegasos nodes only (clarabel has no max_iter); with
    # none of those, the fit says the options were not used
    with pytest.warns(ConicMLWarning, match="node_solver_options were not used"):
        HLSVMClassifier(pruning_fraction=0.0,
                        node_solver_options={"max_iter": 50}).fit(X[:500], y[:500])


def test_pegasos_fallback_to_clarabel_when_T_is_too_small(monkeypatch):
    # T = 50 cannot certify the 4 400-sample root: "auto" re-solves it exactly
    monkeypatch.setenv("CONICML_ENGINE", "numpy")
    X, y = make_moons(4400, noise=0.25, random_state=0)
    est = HLSVMClassifier(pruning_fraction=0.0, delta=0.9, max_iter=50, random_state=0).fit(X, y)
    assert est.node_solvers_ == {"weighted-pegasos->clarabel": 1}  # the root only
    assert est.node_statuses_ == {"optimal": 1}
    with pytest.warns(ConvergenceWarning, match="not solved"):  # the thesis's node solver
        HLSVMClassifier(pruning_fraction=0.0, delta=0.9, max_iter=50,
                        node_solver="weighted-pegasos",
                        random_state=0).fit(X, y)


# ---- prediction by routing: compiled and NumPy paths -------------------------------------------

def test_compiled_routing_equals_numpy_routing():
    pytest.importorskip("numba")
    from conicml.estimators._hlsvm_tree import _route_by_node, _route_kernel

    X, y = make_moons(3000, noise=0.3, random_state=3)
    est = HLSVMClassifier(lam=1e-4, pruning_fraction=0.0, node_solver="clarabel",
                          delta=1e-2).fit(X, y)
    tree = est.tree_
    assert _route_kernel() is not None and est.n_hyperplanes_ >= 5
    for mask in (tree.is_leaf, cost_complexity_sequence(tree)[0][1]):  # full and pruned
        for rows in (X, X[:2999], X[:19]):  # the compiled loop takes rows four at a time
            node, count = tree.route(rows, mask)
            node_np, count_np = _route_by_node(tree, np.ascontiguousarray(rows), mask)
            np.testing.assert_array_equal(node, node_np)
            np.testing.assert_array_equal(count, count_np)
    # a batch below the compiled path's minimum goes through NumPy and agrees too
    np.testing.assert_array_equal(est.apply(X[:5]), est.apply(X)[:5])


# ---- class weights and the score ----------------------------------------------------------

def test_class_weights_enter_leaf_labels_and_the_pruning_cost():
    # the hand tree with c = (c_-, c_+) = (1, 5): weighted (pos, neg) per node
    # 0 (260, 60) R=60, 1 (200, 10) R=10, 2 (60, 50) R=50, 3 (190, 0) R=0,
    # 4 (10, 10) R=10 (a tie: positive), 5 (10, 48) R=10 (negative), 6 (50, 2) R=2.
    # T_0: R(T_1) = 0 + 10 = R(1): node 1 collapses; R(T_2) = 12 < 50 keeps node 2;
    # g(2) = (50 - 12)/1 = 38, g(0) = (60 - 22)/(3 - 1) = 19: the root goes first
    tree = _hand_tree()
    tree.class_weight = np.array([1.0, 5.0])
    assert tree.label.tolist() == [1, 1, 1, 1, 1, 0, 1]
    masks, alphas = cost_complexity_sequence(tree)
    assert alphas == pytest.approx([0.0, 19.0])
    assert np.flatnonzero(~masks[0]).tolist() == [0, 2] and masks[1][0]
    # pruning keeps the class weights
    assert tree.prune_to(masks[0]).class_weight.tolist() == [1.0, 5.0]


def test_score_ranks_within_leaves_and_agrees_with_predict(moons):
    X, y = moons
    est = HLSVMClassifier(lam=1e-3, pruning_fraction=0.0, node_solver="clarabel",
                          delta=0.2).fit(X, y)
    s = est.decision_function(X)
    np.testing.assert_array_equal(est.predict(X), est.classes_[(s >= 0).astype(int)])
    proba = est.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.all((proba[:, 1] >= 0.5) == (s >= 0))
    # within a leaf the score follows the margin of the leaf's parent hyperplane
    leaf = est.apply(X)
    k = np.bincount(leaf).argmax()
    parent = int(np.flatnonzero((est.tree_.left == k) | (est.tree_.right == k))[0])
    f = X[leaf == k] @ est.tree_.weights[parent] + est.tree_.bias[parent]
    assert np.all(np.diff(s[leaf == k][np.argsort(f)]) >= 0)
    assert np.unique(s).size > est.n_leaves_  # continuous, not one value per leaf


def test_imbalanced_default_ranks_where_the_unweighted_tree_is_one_leaf():
    # 4 % positives: the thesis's unweighted leaf vote and pruning keep the root (a
    # constant score, which warns); the default balanced weights keep a split that
    # ranks the held-out positives. Reference in the same run: logistic regression
    from sklearn.datasets import make_classification
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import train_test_split

    X, y = make_classification(1000, 8, n_informative=4, weights=[0.96, 0.04], flip_y=0.01,
                               random_state=0)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.5, stratify=y, random_state=0)
    with pytest.warns(ConvergenceWarning, match="constant score.*single leaf.*balanced"):
        thesis = HLSVMClassifier(class_weight=None, random_state=0).fit(X_tr, y_tr)
    assert thesis.n_hyperplanes_ == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = HLSVMClassifier(random_state=0).fit(X_tr, y_tr)
    auc = roc_auc_score(y_te, est.decision_function(X_te))
    lr = roc_auc_score(y_te, LogisticRegression().fit(X_tr, y_tr).decision_function(X_te))
    assert est.n_hyperplanes_ >= 1 and auc > 0.7 and auc > lr - 0.05


@pytest.mark.slow
def test_imbalanced_default_on_mammography():
    # mammography (2.3 % positives), stratified 5-fold: measured mean AUC 0.92 with the
    # balanced default against 0.88 with the unweighted vote (thesis), in the same run
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold

    X, y = cm.datasets.load("mammography")
    auc = {None: [], "balanced": []}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for tr, te in StratifiedKFold(5, shuffle=True, random_state=0).split(X, y):
            for cw in auc:
                est = HLSVMClassifier(class_weight=cw, random_state=0).fit(X[tr], y[tr])
                auc[cw].append(roc_auc_score(y[te], est.decision_function(X[te])))
    assert np.mean(auc["balanced"]) > 0.9
    assert np.mean(auc["balanced"]) > np.mean(auc[None])


def test_dict_class_weight_is_checked(moons):
    X, y = moons
    with pytest.raises(ValueError, match="class_weight has labels"):
        HLSVMClassifier(class_weight={7: 1.0}).fit(X, y)
    with pytest.raises(ValueError, match="positive"):
        HLSVMClassifier(class_weight={0: -1.0}).fit(X, y)


@pytest.mark.parametrize("old,new,value", [
    ("rho", "pruning_fraction", 0.2), ("T", "max_iter", 300), ("eps", "tol", 1e-3),
])
def test_renamed_parameters_still_fit_with_a_future_warning(moons, old, new, value):
    # rho / T / eps were renamed pruning_fraction / max_iter / tol (docs/glossary.md): the
    # old spelling gives the same tree for one release (same seed, same Pegasos nodes),
    # with a FutureWarning naming the new one; both spellings at once is a TypeError
    X, y = moons[0][:200], moons[1][:200]
    kw = {"node_solver": "weighted-pegasos", "max_iter": 300, "random_state": 0}
    new_est = HLSVMClassifier(**{**kw, new: value}).fit(X, y)
    with pytest.warns(FutureWarning, match=f"renamed '{new}'"):
        old_est = HLSVMClassifier(**{**{k: v for k, v in kw.items() if k != new},
                                     old: value}).fit(X, y)
    np.testing.assert_array_equal(old_est.coef_, new_est.coef_)
    assert old in HLSVMClassifier().get_params()  # still a parameter for one release
    non_default = {"pruning_fraction": 0.3, "max_iter": 100, "tol": 1e-2}[new]
    with pytest.raises(TypeError, match=f"give only '{new}'"):
        HLSVMClassifier(**{**kw, new: non_default, old: value}).fit(X, y)
