"""The code sampler of a record: which package files a run spent its time in.

Reference: the files are known by construction (the test runs code of one module for a
fraction of a second, far longer than the sampling interval).
"""

import os
import time

import numpy as np
import pytest

from conicml._utils.code_sampler import SAMPLE_DIR_ENV, CodeSampler, compiled_kernel_files
from conicml._utils.engines import numba_available
from conicml.contracts.feature_scaling import fs_kernel


def test_sampler_sees_the_package_code_a_run_spends_its_time_in():
    A = np.random.default_rng(0).standard_normal((200, 5))
    with CodeSampler(interval=0.005) as sampler:
        end = time.perf_counter() + 0.3
        while time.perf_counter() < end:
            fs_kernel(A, A, np.ones(5))
    assert "conicml/contracts/feature_scaling.py" in sampler.files
    # only package files, relative to the checkout; none this run never entered
    assert all(f.startswith("conicml/") and f.endswith(".py") for f in sampler.files)
    assert "conicml/solvers/pegasos.py" not in sampler.files
    assert sampler.files == sorted(sampler.files)


def test_compiled_kernels_count_once_called_here():
    if not numba_available():
        pytest.skip("numba is not installed here")
    from conicml._utils import _gaussian_exp_numba as kernels

    block = -np.abs(np.random.default_rng(1).standard_normal((4, 3)))
    kernels.exp_nonpositive_rows(np.ascontiguousarray(block))
    assert "conicml/_utils/_gaussian_exp_numba.py" in compiled_kernel_files()


def _fs_kernel_for(seconds):
    """Time spent in the feature-scaling kernel (a child process's work)."""
    A = np.random.default_rng(0).standard_normal((200, 5))
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        fs_kernel(A, A, np.ones(5))
    return "done"


def test_sampler_collects_the_code_a_spawned_child_ran():
    from conicml.reproductions._harness import run_with_limit

    with CodeSampler() as sampler:
        state, result, _ = run_with_limit(_fs_kernel_for, (0.5,), 300.0)
    assert (state, result) == ("ok", "done")
    # the parent only waited in the harness; the kernel ran in the child
    assert "conicml/contracts/feature_scaling.py" in sampler.files
    assert "conicml/reproductions/_harness.py" in sampler.files
    assert SAMPLE_DIR_ENV not in os.environ  # restored on exit


def test_sampler_rejects_a_non_positive_interval():
    with pytest.raises(ValueError, match="interval"):
        CodeSampler(interval=0.0)
