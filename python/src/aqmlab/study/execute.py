"""Where the runs of a sweep execute: a pool of local processes, or a Dask cluster.

Both backends run the same task, `execute_run`: `aqmlab.run` of a resolved scenario into the
run's directory (the runner writes into a hidden temporary directory and renames it when
the run succeeded), reporting its simulated-time progress through a callback. Workers only
write run directories; the driver alone writes the catalog. With Dask, the study directory
must be on a file system that the workers see at the same path.

Interface of a backend: `submit(run_id, scenario, out) -> future`, `wait(futures, timeout)
-> finished futures`, `result(future) -> dict` (`lost: True` when the run died with its
worker and may be resubmitted), `messages() -> progress dicts`, `stop()` (abandon everything
now) and `close()`.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import multiprocessing as mp
import os
import queue as queue_mod
import re
import signal
import socket
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from aqmlab import scenario as sc
from aqmlab.runs import runner

__all__ = ["DaskBackend", "LocalBackend", "SchedulerError", "execute_run"]

# Simulated-time progress is sent at most this often per run (seconds of wall time).
PROGRESS_EVERY_S = 0.5
CONNECT_TIMEOUT_S = 5.0
_ADDRESS = re.compile(r"(tcp|tls|ws|wss|ucx)://[A-Za-z0-9_.\-\[\]:]+:\d{1,5}")


class SchedulerError(sc.ScenarioError):
    """A bad or unreachable `--scheduler` address."""


def execute_run(
    run_id: str,
    scenario: Mapping[str, Any],
    out: str,
    report: Callable[[dict[str, Any]], None],
) -> dict[str, Any]:
    """Runs one scenario into `out`; never raises for a failed run: returns `{"run_id",
    "ok", "error", "host", "columns"}` (`columns`: each file's columns, `Results.file_columns`,
    None for a failed run). `report` gets `{"run_id", "sim_s", "end_s", "events",
    "wall_s"}` when the run starts and then at most every `PROGRESS_EVERY_S`."""
    last = [-1e9]

    def send(msg: dict[str, Any]) -> None:
        with contextlib.suppress(Exception):  # progress is best effort; never fail a run
            report(msg)

    def progress(p: runner.Progress) -> None:
        now = time.monotonic()
        if now - last[0] >= PROGRESS_EVERY_S:
            last[0] = now
            send(
                {
                    "run_id": run_id,
                    "sim_s": p.sim_time_s,
                    "end_s": p.end_time_s,
                    "events": p.events,
                    "wall_s": p.wall_time_s,
                }
            )

    end = float(scenario.get("duration_s") or 0.0)
    send({"run_id": run_id, "sim_s": 0.0, "end_s": end, "events": 0, "wall_s": 0.0})
    host = socket.gethostname()
    try:
        res = runner.run(scenario, out=out, progress=progress)
    except Exception as e:
        return {"run_id": run_id, "ok": False, "error": sc.one_line(e), "host": host}
    return {"run_id": run_id, "ok": True, "error": None, "host": host, "columns": res.file_columns}


# --- local processes -----------------------------------------------------------------------

_QUEUE: Any = None


def _die_with_parent() -> None:
    """Linux: ask the kernel to SIGKILL this worker when the driver dies (even by kill -9),
    so no orphan keeps writing into the study directory. Best effort elsewhere."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(Exception):
        import ctypes

        pr_set_pdeathsig = 1
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)


@contextlib.contextmanager
def _sigint_blocked():
    """SIGINT blocked in this thread while it starts processes. A child inherits the mask
    through fork and exec, so a Ctrl-C (the terminal sends it to the whole process group)
    cannot reach a worker still importing aqmlab, before `_init_local_worker` ignores it: it
    would print a KeyboardInterrupt traceback and break the pool. The driver gets its Ctrl-C
    when the mask is restored (CPython starts its resource tracker the same way)."""
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - not POSIX
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _init_local_worker(q: Any, parent: int) -> None:
    global _QUEUE
    _QUEUE = q
    # Progress messages are not worth a hang: without this, a worker's exit joins the queue's
    # feeder thread, which waits forever for the queue's write lock if another worker was
    # killed while holding it.
    q.cancel_join_thread()
    # The driver handles Ctrl-C (it stops the workers itself). Ignored first, then unblocked
    # (it was blocked from the start, see `_sigint_blocked`): a pending one is dropped.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    _die_with_parent()
    if os.getppid() != parent:  # the driver died before prctl took effect
        os._exit(1)


def _local_task(run_id: str, scenario: Mapping[str, Any], out: str) -> dict[str, Any]:
    return execute_run(run_id, scenario, out, _QUEUE.put)


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class LocalBackend:
    """`jobs` worker processes (spawned, so nothing of the driver's threads is inherited)."""

    name = "local"

    def __init__(self, jobs: int | None = None) -> None:
        self.jobs = jobs if jobs is not None else default_jobs()
        if self.jobs < 1:
            raise sc.ScenarioError(f"--jobs {self.jobs}: expected at least 1")
        self._ctx = mp.get_context("spawn")
        with _sigint_blocked():  # the queue starts the resource tracker process
            self._queue: Any = self._ctx.Queue()
        self._generation = 0
        self._broken = False
        self._pool: Any = self._new_pool()

    def _new_pool(self) -> cf.ProcessPoolExecutor:
        return cf.ProcessPoolExecutor(
            max_workers=self.jobs,
            mp_context=self._ctx,
            initializer=_init_local_worker,
            initargs=(self._queue, os.getpid()),
        )

    @property
    def description(self) -> str:
        return f"{self.jobs} local process{'es' if self.jobs != 1 else ''}"

    def submit(self, run_id: str, scenario: Mapping[str, Any], out: str) -> cf.Future:
        if self._broken:  # a worker died and took the pool down: start a fresh one
            self._pool.shutdown(wait=False, cancel_futures=True)
            # A fresh progress queue too: the dead worker may have died holding the old one's
            # write lock (a SIGKILL during a put), which would block every later writer.
            old = self._queue
            with _sigint_blocked():
                self._queue = self._ctx.Queue()
            with contextlib.suppress(Exception):
                old.close()
            self._pool = self._new_pool()
            self._generation += 1
            self._broken = False
        with _sigint_blocked():  # the pool starts its worker processes in submit
            future = self._pool.submit(_local_task, run_id, dict(scenario), out)
        future.aqmlab_generation = self._generation  # type: ignore[attr-defined]
        return future

    def wait(self, futures: Iterable[cf.Future], timeout: float) -> set[cf.Future]:
        done, _ = cf.wait(list(futures), timeout=timeout, return_when=cf.FIRST_COMPLETED)
        return set(done)

    def result(self, future: cf.Future) -> dict[str, Any]:
        """The run's outcome; `lost: True` when a worker process died (killed, out of
        memory): the pool is then broken, every run in it is lost, and may be resubmitted."""
        try:
            return future.result()
        except cf.process.BrokenProcessPool as e:
            if getattr(future, "aqmlab_generation", None) == self._generation:
                self._broken = True
            error = f"a worker process died ({sc.one_line(e)})"
            return {"run_id": None, "ok": False, "error": error, "host": None, "lost": True}
        except Exception as e:
            return {"run_id": None, "ok": False, "error": sc.one_line(e), "host": None}

    def messages(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if self._queue is None:  # closed
            return out
        while True:
            try:
                out.append(self._queue.get_nowait())
            except (queue_mod.Empty, OSError, ValueError):
                return out

    def stop(self) -> None:
        """Kills the workers (a run in progress leaves only its hidden temporary directory)."""
        if self._pool is None:
            return
        procs = list((getattr(self._pool, "_processes", None) or {}).values())
        manager = getattr(self._pool, "_executor_manager_thread", None)
        for p in procs:
            with contextlib.suppress(Exception):
                p.kill()
        self._pool.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            with contextlib.suppress(Exception):
                p.join(timeout=5)
        # shutdown(wait=False) forgets the pool's manager thread, which holds the pool's
        # queues until it notices the dead workers: joined here, close() releases them all.
        if manager is not None:
            with contextlib.suppress(Exception):
                manager.join(timeout=5)

    def close(self) -> None:
        """Shuts the pool down and releases its queues now. Their locks are named semaphores
        (spawn context) that the resource tracker unlinks, warning of "leaked semaphore
        objects", when this process ends before they are released; released here, when the
        sweep returns, a later end (a second Ctrl-C during the exit) leaves none behind."""
        if self._pool is None:
            return
        self._pool.shutdown(wait=True)
        with contextlib.suppress(Exception):
            self._queue.close()
            self._queue.join_thread()
        self._pool = None
        self._queue = None


# --- Dask ------------------------------------------------------------------------------------


def _dask_task(run_id: str, scenario: Mapping[str, Any], out: str, topic: str) -> dict[str, Any]:
    from distributed import get_worker

    worker = get_worker()
    return execute_run(run_id, scenario, out, lambda m: worker.log_event(topic, m))


def check_address(address: str) -> None:
    """`scheme://host:port`, scheme tcp, tls, ws, wss or ucx."""
    if not _ADDRESS.fullmatch(address):
        raise SchedulerError(
            f"--scheduler {address}: expected a Dask scheduler address like tcp://HOST:PORT"
        )
    port = int(address.rsplit(":", 1)[1])
    if not 0 < port < 65536:
        raise SchedulerError(f"--scheduler {address}: port {port} is not in 1..65535")


class DaskBackend:
    """The runs as tasks of a Dask distributed cluster (a real scheduler and workers)."""

    name = "dask"

    def __init__(self, address: str, timeout_s: float = CONNECT_TIMEOUT_S) -> None:
        check_address(address)
        from distributed import Client

        self.address = address
        try:
            self.client = Client(address, timeout=f"{timeout_s}s", set_as_default=False)
        except (OSError, TimeoutError, ValueError) as e:
            raise SchedulerError(
                f"--scheduler {address}: cannot reach a Dask scheduler within {timeout_s:g} s "
                f"({sc.one_line(e)}); is `dask scheduler` running there?"
            ) from None
        self.topic = f"aqmlab-progress-{uuid.uuid4().hex}"
        self._events: deque[dict[str, Any]] = deque()
        self._lock = threading.Lock()
        self.client.subscribe_topic(self.topic, self._on_event)

    @property
    def description(self) -> str:
        try:
            info = self.client.scheduler_info(n_workers=-1)
        except TypeError:  # distributed < 2025.4 lists every worker anyway
            info = self.client.scheduler_info()
        workers = info.get("workers", {})
        threads = sum(w.get("nthreads", 0) for w in workers.values())
        return f"Dask {self.address} ({len(workers)} workers, {threads} threads)"

    def _on_event(self, event: Any) -> None:
        _, msg = event
        with self._lock:
            self._events.append(msg)

    def submit(self, run_id: str, scenario: Mapping[str, Any], out: str) -> Any:
        key = f"aqmlab-run-{run_id}-{uuid.uuid4().hex[:8]}"
        return self.client.submit(
            _dask_task, run_id, dict(scenario), out, self.topic, key=key, pure=False
        )

    def wait(self, futures: Iterable[Any], timeout: float) -> set[Any]:
        # Polled: distributed.wait needs a default client, and this one is not (so that a
        # notebook's own client stays the default).
        futures = list(futures)
        deadline = time.monotonic() + timeout
        while True:
            done = {f for f in futures if f.done()}
            if done or time.monotonic() >= deadline:
                return done
            time.sleep(0.02)

    def result(self, future: Any) -> dict[str, Any]:
        try:
            return future.result()
        except Exception as e:  # the task was lost (worker killed too often) or cancelled
            return {"run_id": None, "ok": False, "error": sc.one_line(e), "host": None}

    def messages(self) -> list[dict[str, Any]]:
        with self._lock:
            out = list(self._events)
            self._events.clear()
        return out

    def stop(self) -> None:
        """Cancels what has not started; a run already executing on a worker finishes and
        lands in its directory, where the next sweep finds it."""
        with contextlib.suppress(Exception):
            self.client.unsubscribe_topic(self.topic)
        with contextlib.suppress(Exception):
            self.client.close(timeout=5)

    def close(self) -> None:
        self.stop()
