"""``ameide serve --workers N``: N worker processes serve REST, MCP and gRPC on the same ports.

A supervisor (the process ``ameide serve`` started in) binds the HTTP listening socket once and
hands it to each worker (uvicorn serves on an inherited socket and the kernel gives each
connection to whichever worker accepts it first); for gRPC, which cannot serve on an inherited
socket, every worker binds the port with ``SO_REUSEPORT`` and the kernel spreads connections over
them. The supervisor keeps a bound, non-listening ``SO_REUSEPORT`` socket on the gRPC port the
whole time: it resolves ``--grpc-port 0``, fails early when an ordinary server holds the port,
and keeps the port while a worker restarts.

Workers are spawned, not forked: each opens the home itself (its own database engine, index
handles), exactly as several processes on one home do; the first worker alone builds semantic
vectors in the background after writes. Each worker
marks itself ready in a shared array once both its listeners serve, and clears the mark when it
starts draining or dies; ``/readyz`` and the gRPC health service of every worker answer ready
only when every mark is set.

The supervisor announces the endpoints once every worker is ready, restarts a worker that dies
(logged, with a growing pause when it keeps dying young), and on SIGTERM/SIGINT sends SIGTERM to
every worker — each drains its HTTP then its gRPC calls — and returns once all have exited. A
second signal forces the workers (SIGINT: uvicorn then closes at once). A worker whose
supervisor dies without stopping it stops by itself. Metrics are per worker: ``/metrics`` shows
the counters of the worker that answered.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from multiprocessing.process import BaseProcess
from typing import Any

from domain.errors import InvalidArgument
from edge.errors import Unavailable
from mcp_adapter.settings import McpSettings
from server.serve import Endpoints, ServeConfig, endpoints_of, grpc_credentials
from service.settings import Settings

log = logging.getLogger("ameide.server")

POLL_SECONDS = 0.2
YOUNG_SECONDS = 10.0  # a worker that dies sooner than this after its start waits before restart
MAX_PAUSE_SECONDS = 30.0
START_SECONDS = 120.0  # every worker must be ready within this, or the start fails
CLOSE_SECONDS = 5.0  # a drained worker waits this long at most for its background upkeep


def default_workers() -> int:
    """The number of cores this process may run on (1 where ``SO_REUSEPORT`` is missing)."""
    if not hasattr(socket, "SO_REUSEPORT"):
        return 1
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class WorkerSpec:
    """What a worker needs to open the home and serve (pickled into the spawned process)."""

    settings: Settings
    config: ServeConfig
    background: bool
    supervisor_pid: int


class WorkerPool:
    """A supervisor of ``workers`` serving processes; ``run()`` blocks until ``stop()`` or a
    signal (main thread), then drains every worker.

    Binding happens in the constructor, so a taken port or a wrong host fails before any worker
    starts. Call ``close()`` if ``run()`` is never called.
    """

    def __init__(
        self, settings: Settings, config: ServeConfig, workers: int, *, background: bool = True
    ) -> None:
        if workers < 2:
            raise InvalidArgument("a worker pool needs at least 2 workers", field="workers")
        if not hasattr(socket, "SO_REUSEPORT"):
            raise InvalidArgument(
                "--workers above 1 needs SO_REUSEPORT, which this platform lacks", field="workers"
            )
        config.check_exposure()
        grpc_credentials(config)  # unreadable TLS files: one clear error here, not N workers'
        self.workers = workers
        self.mcp_path = McpSettings().path
        self._http = _listen(config.host, config.http_port)
        try:
            self._grpc = _reserve(config.host, config.grpc_port)
        except BaseException:
            self._http.close()
            raise
        self.http_port = self._http.getsockname()[1]
        self.grpc_port = self._grpc.getsockname()[1]
        self.config = replace(config, http_port=self.http_port, grpc_port=self.grpc_port)
        self.spec = WorkerSpec(settings, self.config, background, os.getpid())
        self._context = multiprocessing.get_context("spawn")
        self.ready = self._context.Array("b", workers, lock=False)
        # open HTTP connections per worker (OneAcceptPerWakeup): a worker holding more than
        # another leaves a new connection to it
        self.connections = self._context.Array("i", workers, lock=False)
        self._processes: list[BaseProcess | None] = [None] * workers
        self._stop = threading.Event()
        self._signals: list[int] = []

    def endpoints(self) -> Endpoints:
        """The URLs every worker answers on."""
        return endpoints_of(self.config, self.http_port, self.grpc_port, self.mcp_path)

    @property
    def pids(self) -> list[int]:
        """The process ids of the running workers."""
        return [p.pid for p in self._processes if p is not None and p.pid is not None]

    def _pid(self, index: int) -> int | None:
        process = self._processes[index]
        return process.pid if process is not None else None

    def run(self, on_ready: Callable[[Endpoints], None] | None = None) -> None:
        """Start the workers, announce once all are ready, restart any that dies, and drain them
        all on ``stop()`` or SIGINT/SIGTERM. Raises ``Unavailable`` when a worker exits before
        the first time all were ready (its own log says why)."""
        restore = self._capture_signals()
        try:
            self._supervise(on_ready)
        finally:
            self._drain()
            restore()
            self.close()

    def stop(self) -> None:
        """Ask every worker to drain and the supervisor to return (from any thread)."""
        self._stop.set()

    def close(self) -> None:
        """Release the listening sockets."""
        self._http.close()
        self._grpc.close()

    # -- supervision ---------------------------------------------------------------------------
    def _supervise(self, on_ready: Callable[[Endpoints], None] | None) -> None:
        started = [0.0] * self.workers
        deaths = [0] * self.workers
        not_before = [0.0] * self.workers
        for index in range(self.workers):
            started[index] = self._start(index)
        announced = False
        deadline = time.monotonic() + START_SECONDS
        while not self._stop.is_set():
            now = time.monotonic()
            for index, process in enumerate(self._processes):
                if process is not None and process.is_alive():
                    if now - started[index] > YOUNG_SECONDS:
                        deaths[index] = 0
                    continue
                self.ready[index] = 0
                if process is not None:  # it just died
                    process.join()
                    code = process.exitcode
                    self._processes[index] = None
                    if not announced:
                        raise Unavailable(
                            f"worker {index + 1} (pid {process.pid}) exited with {_status(code)} "
                            "before it was ready; see its log above"
                        )
                    deaths[index] += 1 if now - started[index] < YOUNG_SECONDS else 0
                    pause = min(MAX_PAUSE_SECONDS, 0.5 * 2 ** deaths[index]) if deaths[index] else 0
                    not_before[index] = now + pause
                    log.warning(
                        "worker %d (pid %s) exited with %s; restarting it%s",
                        index + 1,
                        process.pid,
                        _status(code),
                        f" in {pause:.1f} s" if pause else "",
                    )
                if now >= not_before[index]:
                    started[index] = self._start(index)
                    log.warning("worker %d restarted (pid %s)", index + 1, self._pid(index))
            if not announced:
                if all(self.ready):
                    announced = True
                    log.info("serving with %d workers (pids %s)", self.workers, self.pids)
                    if on_ready is not None:
                        on_ready(self.endpoints())
                elif now > deadline:
                    raise Unavailable(
                        f"the workers were not all ready within {START_SECONDS:.0f} s "
                        f"({sum(self.ready)} of {self.workers}); see their log above"
                    )
            self._stop.wait(POLL_SECONDS)

    def _start(self, index: int) -> float:
        process = self._context.Process(
            target=serve_worker,
            args=(index, self.spec, self._http, self.ready, self.connections),
            name=f"ameide-worker-{index + 1}",
        )
        process.start()
        self._processes[index] = process
        return time.monotonic()

    def _drain(self) -> None:
        """SIGTERM to every worker (SIGINT too after a second signal), then wait for them all."""
        forced = False
        running = [p for p in self._processes if p is not None and p.is_alive()]
        for process in running:
            _signal(process, signal.SIGTERM)
        deadline = time.monotonic() + self.config.grace_seconds * 2 + 30
        while any(p.is_alive() for p in running):
            if len(self._signals) > 1 and not forced:
                forced = True
                for process in running:
                    _signal(process, signal.SIGINT)
            if time.monotonic() > deadline:
                for process in running:
                    if process.is_alive():
                        log.warning("worker pid %s did not stop; killing it", process.pid)
                        process.kill()
                break
            time.sleep(0.05)
        for process in running:
            process.join()
        for index in range(self.workers):
            self.ready[index] = 0
        if running:
            log.info("stopped: %d workers drained", len(running))

    def _capture_signals(self) -> Callable[[], None]:
        """SIGINT/SIGTERM stop the pool (main thread only; elsewhere ``stop()`` does)."""
        if threading.current_thread() is not threading.main_thread():
            return lambda: None

        def handle(sig: int, frame: Any) -> None:
            self._signals.append(sig)
            self._stop.set()

        previous = {sig: signal.signal(sig, handle) for sig in (signal.SIGINT, signal.SIGTERM)}

        def restore() -> None:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

        return restore


def _signal(process: BaseProcess, sig: int) -> None:
    if process.pid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, sig)


def _status(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"code {code}"


def _listen(host: str, port: int) -> socket.socket:
    """The HTTP listening socket every worker accepts on (as uvicorn binds its own).

    Made with the protocol named, ``IPPROTO_TCP``, as ``getaddrinfo`` gives it to uvicorn:
    asyncio sets ``TCP_NODELAY`` on an accepted connection only when its listening socket says
    TCP. With protocol 0 the workers' responses went out under Nagle's algorithm, and every
    request on a kept-alive connection waited ~40 ms for the client's delayed ACK (one client:
    16 req/s against one process's 52)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
        sock.set_inheritable(True)
    except OSError as exc:
        sock.close()
        raise _bind_error(host, port, exc, "port") from None
    return sock


def _reserve(host: str, port: int) -> socket.socket:
    """A bound, non-listening ``SO_REUSEPORT`` socket holding the gRPC port for the workers."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise _bind_error(host, port, exc, "grpc_port") from None
    return sock


class OneAcceptPerWakeup(socket.socket):
    """The shared listening socket as a worker accepts on it: one connection per wake-up, and
    none while this worker holds more open connections than another.

    asyncio (under uvicorn) accepts in a loop until the socket has nothing pending, and the
    kernel wakes every worker for a new connection: whichever came first took it, and kept it
    (kept-alive) for the whole session. Counted with ``ss`` on ``--workers 2`` after eight
    clients connected: 7/1, 6/2 and 5/3 splits, and the worker with one client sat idle a
    third of the time while the other's seven queued for its one core.

    Here every other ``accept`` reports "nothing pending" (which ends asyncio's loop without
    an error), so a worker takes one connection per turn of its event loop; and a worker whose
    open connections (``connections[index]``, shared by the workers; each accepted socket
    counts itself down when closed) outnumber another worker's passes for up to
    :data:`DEFER_SECONDS`, sleeping a millisecond per pass, so the less loaded worker takes it.
    After that it accepts anyway: a stuck or busy worker never leaves a client waiting longer.
    Connections still queue in the kernel (the listen backlog is unchanged); none is refused."""

    def __init__(self, index: int, connections: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._index = index
        self._connections = connections
        self._hold = False
        self._deferring: float | None = None
        connections[index] = 0  # a restarted worker starts with none

    def accept(self) -> tuple[socket.socket, Any]:
        if self._hold:
            self._hold = False
            raise BlockingIOError("one connection per wake-up")
        counts = self._connections
        if counts[self._index] > min(counts):
            now = time.monotonic()
            if self._deferring is None:
                self._deferring = now
            if now - self._deferring < DEFER_SECONDS:
                time.sleep(0.001)  # the listening socket stays readable: do not spin
                raise BlockingIOError("another worker holds fewer connections")
        self._deferring = None
        fd, address = self._accept()  # type: ignore[attr-defined]
        accepted = _Counted(self.family, self.type, self.proto, fileno=fd)
        if socket.getdefaulttimeout() is None and self.gettimeout():
            accepted.setblocking(True)  # as socket.accept does
        accepted.count(counts, self._index)
        self._hold = True
        return accepted, address


DEFER_SECONDS = 0.1
"""How long a worker leaves a new connection to a less loaded worker before taking it: a busy
worker's event loop waits for the GIL behind its request threads, and with 20 ms it sometimes
came back too late (6/2 splits of eight clients); with 100 ms the splits counted were 4/4."""


class _Counted(socket.socket):
    """An accepted connection that counts itself in its worker's open connections."""

    _counts: Any = None
    _slot = 0

    def count(self, counts: Any, slot: int) -> None:
        self._counts, self._slot = counts, slot
        counts[slot] += 1

    def close(self) -> None:
        counts, self._counts = self._counts, None
        if counts is not None:
            counts[self._slot] = max(0, counts[self._slot] - 1)
        super().close()


def _bind_error(host: str, port: int, exc: OSError, field: str) -> InvalidArgument:
    flag = "--port (AMEIDE_HTTP_PORT)" if field == "port" else "--grpc-port (AMEIDE_GRPC_PORT)"
    if exc.errno == 98:  # EADDRINUSE
        return InvalidArgument(
            f"cannot listen on {host}:{port} ({exc.strerror or exc}); choose another {flag} "
            "or --host",
            field=field,
        )
    return InvalidArgument(
        f"cannot listen on {host} ({exc.strerror or exc}): --host must be an address of this "
        "machine, e.g. 127.0.0.1, ::1 or 0.0.0.0",
        field="host",
    )


# -- the worker process ------------------------------------------------------------------------
def serve_worker(
    index: int, spec: WorkerSpec, http: socket.socket, ready: Any, connections: Any
) -> None:
    """One worker: open the home, serve on the inherited HTTP socket and the shared gRPC port
    until SIGTERM (or its supervisor is gone), drain, and exit 0."""
    from runtime import build_app, serving_process
    from server.serve import AmeideServer, configure_logging

    os.setpgrp()  # a terminal's Ctrl-C reaches the supervisor only, which drains the workers
    configure_logging()
    total = len(ready)

    def workers() -> tuple[int, int]:
        return sum(1 for mark in ready if mark), total

    def mark(value: int) -> None:
        ready[index] = value

    # Every worker applies its own writes to the keyword index in the background (a status
    # check or the smoke waits on that); only the first builds the semantic vectors after
    # writes (the others see them when the index reopens on its commits): N workers embedding
    # the same versions would only compete.
    serving_process()
    app = build_app(spec.settings, background=spec.background, embedding=index == 0)
    try:
        if app.semantic is not None:
            app.semantic.warm()  # before ready: a cold worker would leave its share of
            # the first connections to a warm one (OneAcceptPerWakeup gives up after 100 ms)
        server = AmeideServer(
            app.service,
            spec.settings,
            spec.config,
            sockets=[OneAcceptPerWakeup(index, connections, fileno=http.detach())],
            grpc_reuseport=True,
            workers=workers,
        )
        app.start_source_scheduler()  # every worker: the database lease picks one per run
        threading.Thread(
            target=_watch_supervisor,
            args=(spec.supervisor_pid, server.stop),
            name="ameide-supervisor-watch",
            daemon=True,
        ).start()
        server.run(on_ready=lambda _: mark(1), on_stopping=lambda: mark(0), reraise=False)
    finally:
        mark(0)
        _close(app)


def _close(app: Any) -> None:
    """Close the home, but exit after ``CLOSE_SECONDS`` even if an embedding batch still runs
    (what is embedded is kept; the rest is embedded later, as after any stop)."""
    closing = threading.Thread(target=app.close, name="ameide-close", daemon=True)
    closing.start()
    closing.join(CLOSE_SECONDS)
    if closing.is_alive():
        log.warning("exiting without waiting for the embedding batch in progress")


def _watch_supervisor(pid: int, stop: Callable[[], None]) -> None:
    while os.getppid() == pid:
        time.sleep(1.0)
    log.warning("the supervisor (pid %d) is gone; draining", pid)
    stop()
