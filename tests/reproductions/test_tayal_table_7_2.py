"""tayal_table_7_2: the cluster-spread ablation's choice of spread and its section.

References: the errors are set by the test itself (stand-ins for svm_baseline and the
fits); Table 7.2's numbers are the entry's THESIS (SVM 44.3 %, FULL-FS 16.5 %, AO-II
10.5 %).
"""

import argparse

from conicml.reproductions import tayal_table_7_2 as t72
from conicml.reproductions._tables import thesis_pairs


def test_nearest_picks_the_error_closest_to_the_target_and_the_smaller_key_on_a_tie():
    errors = {0.8: 22.3, 4.0: 43.1, 5.0: 44.9, 6.0: 46.2}
    assert t72.nearest(errors, 44.3) == 5.0
    assert t72.nearest({1.0: 40.0, 2.0: 48.0}, 44.0) == 1.0


def _section(monkeypatch, fs_test, oracle_test):
    """The ablation's lines with the SVM and the fits replaced by fixed errors."""
    svm_test = {0.8: 0.22, 5.0: 0.45}

    def fake_svm(seed, spread, quick, n_features=None):
        test = oracle_test[spread] if n_features else svm_test.get(spread, 0.30)
        return {"val": test, "test": test, "log2_C": 3, "log2_sigma": 4}

    def fake_run(fn, args, limit):
        return "ok", {"val": 0.1, "test": fs_test[args[0]], "objective": 1.0,
                      "correct": 15, "incorrect": 3, "label": "minimum",
                      "status": "optimal"}, 1.0

    monkeypatch.setattr(t72, "svm_baseline", fake_svm)
    monkeypatch.setattr(t72, "run_with_limit", fake_run)
    monkeypatch.setattr(t72, "SPREADS", (0.8, 2.5, 5.0))
    args = argparse.Namespace(seed=0, spread=0.8, quick=False, jobs=1, limit=10.0)
    r0 = {"test": 0.106, "correct": 17, "incorrect": 7}
    picks = {"FULL-FS": (64.0, 1.0, r0), "AO-II": (16.0, 0.015625, r0)}
    return "\n".join(t72.spread_ablation(args, t72.svm_baseline(0, 0.8, False), picks))


def test_ablation_adds_no_compared_pair_and_says_when_the_pattern_fails(monkeypatch):
    oracle = {0.8: 0.08, 2.5: 0.3, 5.0: 0.38}
    text = _section(monkeypatch, {"full": 0.452, "ao2": 0.401}, oracle)
    assert thesis_pairs(text, t72.THESIS_LAYOUT) == []
    assert "at spread 5 (45.0 %)" in text  # 45 % is nearest 44.3 %
    assert "does not survive" in text and "overlap in the informative features" in text


def test_ablation_says_when_the_pattern_survives(monkeypatch):
    oracle = {0.8: 0.05, 2.5: 0.07, 5.0: 0.09}
    text = _section(monkeypatch, {"full": 0.15, "ao2": 0.10}, oracle)
    assert "survives" in text and "does not survive" not in text
    assert "the probes, not overlapping classes, make the SVM err" in text
