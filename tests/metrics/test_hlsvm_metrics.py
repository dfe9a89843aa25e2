"""RE, RC (5.8)–(5.9) and the relative costs of ch. 6 against the thesis's own table rows."""

import pytest

from conicml.metrics import (
    prediction_operations,
    relative_complexity,
    relative_cost,
    relative_error,
)

# Table 5.4: (lin err, NL err, H-LSVM err, n_SV, Hyp, printed RE, printed RC)
TABLE_5_4 = [
    ("IJCNN", 7.82, 1.01, 2.36, 3154, 7.28, 0.80, 2.0e-3),
    ("Shuttle", 2.21, 0.062, 0.10, 66, 5.18, 0.98, 6.43e-2),
    ("M3V0", 2.09, 0.33, 1.79, 2873, 3.15, 0.17, 7.49e-4),
    ("M3V0m8", 3.90, 0.03, 1.43, 13471, 4.73, 0.64, 2.77e-4),
    ("Vehicle", 14.18, 11.88, 12.61, 23642, 2.84, 0.68, 7.78e-5),
    ("Faces", 8.81, 2.97, 6.39, 1260.3, 2.59, 0.41, 1.26e-3),
    ("Covtype", 23.66, 18.57, 11.39, 245687.2, 12.93, 2.41, 4.86e-5),
]


@pytest.mark.parametrize("name,lin,nl,h,nsv,hyp,re,rc", TABLE_5_4)
def test_table_5_4_rows(name, lin, nl, h, nsv, hyp, re, rc):
    # the thesis prints RE to 2 decimals and RC to 3 significant digits (2 for IJCNN)
    assert relative_error(h, lin, nl) == pytest.approx(re, abs=0.005 + 1e-12)
    assert relative_complexity(hyp, nsv) == pytest.approx(rc, rel=0.01)


def test_table_5_7_svm_trees_and_usps():
    # SVM Trees on Faces: RE -0.03, RC 0.002; H-LSVM on USPS: RE 0.79, RC 0.04
    assert relative_error(8.99, 8.81, 2.97) == pytest.approx(-0.03, abs=0.005)
    assert relative_complexity(4, 1260.3) == pytest.approx(0.002, abs=0.0005)
    assert relative_error(5.38, 8.67, 4.53) == pytest.approx(0.79, abs=0.01)
    assert relative_complexity(64.77, 1521) == pytest.approx(0.04, abs=0.005)


# Table 6.2 (baselines: LSVM 3.92 %, NLSVM 0.020 % with 13 477 SVs, 784 features)
BASE_OPS = (prediction_operations("linear", 784), prediction_operations("kernel", 784, 13477))


@pytest.mark.parametrize("feat,model,count,err,re,rcc", [
    (50, "linear", 1, 6.02, -0.54, -7.00e-5),
    (50, "kernel", 63490, 2.76, 0.30, 0.30),
    (50, "hlsvm", 3.17, 10.17, -1.60, -5.90e-5),
    (100, "kernel", 32544, 1.05, 0.74, 0.31),
    (500, "hlsvm", 4.94, 1.44, 0.64, 1.6e-4),
    (784, "hlsvm", 4.73, 1.43, 0.64, 2.8e-4),
])
def test_table_6_2_rows(feat, model, count, err, re, rcc):
    assert relative_error(err, 3.92, 0.020) == pytest.approx(re, abs=0.006)
    ops = prediction_operations(model, feat, count)
    assert relative_cost(ops, *BASE_OPS) == pytest.approx(rcc, rel=0.02)


def test_table_6_3_times():
    # H-LSVM at 50 features: RTT 1.07e-2 (training), RCT -4.5e-5 (classification)
    assert relative_cost(1.17e3, 3.38e2, 7.77e4) == pytest.approx(1.07e-2, rel=0.01)
    assert relative_cost(1.76e-6, 3.00e-6, 2.77e-2) == pytest.approx(-4.5e-5, rel=0.01)


def test_vectorised_and_bad_input():
    out = relative_error([2.36, 0.10], [7.82, 2.21], [1.01, 0.062])
    assert out.shape == (2,)
    with pytest.raises(ValueError, match="undefined"):
        relative_error(1.0, 2.0, 2.0)
    with pytest.raises(ValueError, match="n_support_vectors"):
        relative_complexity(3.0, 1)
    with pytest.raises(ValueError, match="finite"):
        relative_error(float("nan"), 2.0, 1.0)
    with pytest.raises(ValueError, match="model"):
        prediction_operations("rbf", 10, 3)
