"""Seeded ordinal cluster instances shared by the cbor-smo tests (linear and kernel paths)."""

import numpy as np

import conicml as cm


def random_clusters(seed, k, dim, r, sep=3.0):
    """Seeded ordinal clusters: ranks spaced by ``sep`` along a random direction, every rank
    present, sigmas in [0, 0.5)."""
    rng = np.random.default_rng(seed)
    ranks = np.concatenate([np.arange(1, r + 1), rng.integers(1, r + 1, k - r)])
    u = rng.normal(size=dim)
    means = rng.normal(size=(k, dim)) + sep * np.outer(ranks - (r + 1) / 2, u / np.linalg.norm(u))
    return cm.ClusterMoments(means, rng.uniform(0, 0.5, k), np.ones(k), ranks)


def duplicated_clusters(seed, k, dim, copies):
    """``k`` random clusters (4 ranks) plus ``copies`` exact copies (same mean, sigma, rank)
    and 4 copies of a mean under the next rank: equal kernel columns, pairs with curvature
    a = ||mu_l - mu_u||^2 = 0."""
    base = random_clusters(seed, k, dim, 4)
    rng = np.random.default_rng(seed)
    same = rng.choice(k, copies, replace=False)
    other = rng.choice(np.flatnonzero(base.labels < 4), 4, replace=False)
    means = np.r_[base.means, base.means[same], base.means[other]]
    sigmas = np.r_[base.sigmas, base.sigmas[same], base.sigmas[other]]
    ranks = np.r_[base.labels, base.labels[same], base.labels[other] + 1]
    return cm.ClusterMoments(means, sigmas, np.ones(means.shape[0]), ranks)
