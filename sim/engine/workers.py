"""Process pools for independent simulations: forked workers that leave Ctrl-C to their parent.

Ctrl-C reaches every process of the terminal's process group. Workers ignore it, so none prints a
traceback of its own; the parent, interrupted, cancels what has not started and stops the workers
at once (SIGKILL) instead of waiting for the simulations they are running. A parent that dies without that
chance (killed) takes its workers with it: on Linux each asks the kernel for SIGTERM when its
parent exits (``prctl(PR_SET_PDEATHSIG)``), so none is left computing for no one.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import signal
import sys
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager

#: prctl option: the signal a process gets when its parent exits (linux/prctl.h).
_PR_SET_PDEATHSIG = 1

#: Seconds a stopped pool's manager thread is given to notice its killed workers and end.
_MANAGER_EXIT_S = 10.0


def _leave_interrupts_to_the_parent() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The parent's own handlers (the CLI's for SIGTERM and SIGHUP) are not the workers': a worker
    # told to stop stops.
    for number in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


@contextmanager
def worker_pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    """A pool of ``workers`` forked processes, stopped at once if the block raises (Ctrl-C included).

    fork, not spawn: spawn re-runs the caller's main module in each worker, which breaks any script
    that calls the library without an ``if __name__ == "__main__"`` guard, and forked workers inherit
    the loaded system. They only simulate and return results; they touch no lock of the parent's
    other threads (a progress bar)."""
    context = multiprocessing.get_context("fork")
    # The caller's own child processes (a script using the library may have some) are left alone:
    # only those started since the pool was made, its workers, are stopped.
    others = set(multiprocessing.active_children())
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_leave_interrupts_to_the_parent)
    try:
        yield pool
        # Inside the try: a Ctrl-C while the finished pool is being waited for stops it the same way.
        pool.shutdown(wait=True)
    except BaseException:
        # Taken before shutdown, which forgets the thread when it is not told to wait for it.
        manager = getattr(pool, "_executor_manager_thread", None)
        pool.shutdown(wait=False, cancel_futures=True)
        for child in multiprocessing.active_children():
            if child not in others:
                # SIGKILL, which no handler can catch: a worker forked a moment ago still has the
                # parent's Python handlers (the CLI's for SIGTERM) until its initializer runs, and
                # one raising in the child's first bytecodes, before multiprocessing's guard, would
                # unwind into a copy of the parent's own code (the likely cause of a session 25 CI
                # run in which pytest-xdist was told of one test twice, under load).
                child.kill()
        # The pool's manager thread now finds its workers gone and closes its wake-up pipe. Waited
        # for here, it has done so before the interpreter exits: otherwise the exit hook of
        # concurrent.futures wakes every manager thread without the pool's lock and can write to
        # that pipe as it closes, which Python 3.11 reports as an ignored exception on standard
        # error after the run's own line (seen once in CI under load, after a Ctrl-C). Bounded, so
        # a manager thread that does not stop cannot hold the exit. (Until session 33 the thread
        # was looked up after shutdown, which had set it to None: nothing was waited for, and CI
        # failed twice on that ignored exception.)
        if manager is not None:
            manager.join(timeout=_MANAGER_EXIT_S)
        raise
