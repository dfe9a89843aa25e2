"""``conicml._utils.threads.for_row_blocks``: every row once, errors raised, forks safe."""

import multiprocessing
import threading
import time

import numpy as np
import pytest

from conicml._utils.threads import for_row_blocks


@pytest.mark.parametrize("workers", [1, 2, 3])
@pytest.mark.parametrize(("n_rows", "block"), [(0, 4), (1, 4), (10, 4), (12, 4), (100, 7)])
def test_every_row_is_visited_once(workers, n_rows, block):
    seen = np.zeros(n_rows, int)
    lock = threading.Lock()

    def fn(start, stop):
        assert 0 <= start < stop <= n_rows and stop - start <= block
        with lock:
            seen[start:stop] += 1

    for_row_blocks(fn, n_rows, workers, block)
    np.testing.assert_array_equal(seen, 1)


def test_a_block_error_is_raised_after_every_thread_stopped():
    done = []

    def fn(start, stop):
        if start == 4:
            raise ValueError("block 4")
        time.sleep(0.001)
        done.append(start)

    with pytest.raises(ValueError, match="block 4"):
        for_row_blocks(fn, 400, workers=2, block=4)
    # the threads take no new block once one failed, and none runs after the call returned
    assert 4 not in done and len(done) < 99
    count = len(done)
    time.sleep(0.05)
    assert len(done) == count


def _child(queue):
    out = np.zeros(50)

    def fn(start, stop):
        out[start:stop] = np.arange(start, stop)

    for_row_blocks(fn, 50, workers=2, block=5)
    queue.put(out.tolist())


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                    reason="no fork start method here")
def test_a_forked_child_gets_threads_of_its_own():
    # the parent's pool is built first; a forked child inherits the pool object without
    # its threads, so it must build its own (else its blocks would never run)
    for_row_blocks(lambda start, stop: None, 50, workers=2, block=5)
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_child, args=(queue,))
    child.start()
    child.join(60)
    alive = child.is_alive()
    if alive:
        child.kill()
    assert not alive, "the forked child's row blocks never ran"
    assert queue.get(timeout=5) == list(range(50))


def test_a_nested_call_runs_on_its_own_thread():
    # a block that calls for_row_blocks again: the pool's thread is busy with the outer
    # call, so the inner one must not wait for it (it would never run)
    out = np.zeros((40, 30))

    def outer(start, stop):
        def inner(a, b):
            out[start:stop, a:b] += 1.0

        for_row_blocks(inner, 30, workers=2, block=4)

    worker = threading.Thread(target=for_row_blocks, args=(outer, 40, 2, 4))
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "the nested call deadlocked"
    np.testing.assert_array_equal(out, 1.0)
