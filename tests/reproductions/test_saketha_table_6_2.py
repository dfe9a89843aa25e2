"""The G ablation of the Table 6.2 entry: the difference-of-gammas noise, the scale
invariance of the test errors, and an ablation that adds no compared cells."""

import numpy as np
import pytest
from scipy import integrate, stats

from conicml.reproductions import thesis_pairs
from conicml.reproductions.saketha_table_6_2 import (
    G_READINGS,
    THESIS_LAYOUT,
    DiffGamma,
    g_ablation,
    row_stats,
    simulate,
)


def test_diff_gamma_cdf_is_the_integral_of_its_density_and_fits_its_samples():
    s = 2.0
    noise = DiffGamma(s)
    density = lambda x: np.exp(-abs(x) / s) * (1 + abs(x) / s) / (4 * s)  # noqa: E731
    for x in (-7.0, -1.5, 0.0, 0.8, 5.0):
        assert noise.cdf(np.array(x)) == pytest.approx(
            integrate.quad(density, -np.inf, x)[0], abs=1e-9)
    sample = noise.rvs(size=(20_000,), random_state=np.random.default_rng(0))
    assert sample.var() == pytest.approx(4 * s * s, rel=0.05)  # variance 2 k theta^2
    assert stats.kstest(sample, noise.cdf).pvalue > 1e-3


def test_scale_of_the_noise_does_not_change_the_test_errors():
    # b - 1 and sigma_hat scale with the noise: F(b - 1) is scale-free. Scales 2 and 1/2
    # differ by a power of two, so every sample, mean and variance scales exactly in
    # floating point and the errors are equal, not only close
    a = simulate("G", 300, seed=5, noise=stats.dgamma(2, scale=2.0))
    b = simulate("G", 300, seed=5, noise=stats.dgamma(2, scale=0.5))
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
    assert row_stats(a) == row_stats(simulate("G", 300, seed=5))


def test_the_ablation_adds_no_compared_cells():
    text = "\n".join(g_ablation(200, 3, repeats=2))
    assert "| thesis Table 6.2, G |" in text and len(G_READINGS) == 6
    assert thesis_pairs(text, THESIS_LAYOUT) == []
