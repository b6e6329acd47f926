"""Surface benchmark: ``read_context`` through REST, gRPC and MCP over HTTP beside in-process,
against ``ameide serve --workers 1`` and ``--workers N`` (N = cores) side by side.

Run: ``.venv/bin/python -m bench.bench_surface`` (``--quick`` for a smoke run; ``--help``).
Prints a table, then the worker-scaling checks of issue 11 (REST at 8 clients: ``--workers N``
throughput against ``--workers 1``; p95 at 8 clients against p95 at 1 client).

It seeds a temporary home (SQLite; ``--postgres`` puts the database in a fresh PostgreSQL one
at AMEIDE_BENCH_POSTGRES_URL instead) with the sample backlog of ``examples/backlog`` ingested
as evidence, padded with synthetic documents from ``bench.corpus`` to about ``--chunks`` more
chunks, and the Testing SOP of ``examples/testing-sop.md`` written as canonical and published.
A reader principal gets a bearer token. The in-process ``MemoryService.reading.read_context`` is
timed first; then, for each ``--workers`` count, ``ameide serve --workers W`` starts as a separate
process on free loopback ports (so the load generator does not share the servers' GIL) and the
same read is timed through REST (``POST /v1/context`` with httpx, one keep-alive connection per
client), gRPC (``GetReadContext`` through the generated stub, a channel per client) and MCP over
Streamable HTTP (``memory.get_context`` as a JSON-RPC ``tools/call`` POST with httpx, one
keep-alive connection per client — the server is stateless, so no session is needed; ``--mcp-sdk``
uses the official SDK client instead, a session per client, which costs the client about 13 ms
of CPU per call of its own and so steals CPU from the servers on a small machine).

The clients are threads of this process doing little besides waiting (a request is a few
hundred bytes out and a JSON parse in), so on a small machine nearly all the CPU goes to the
servers. With several workers, each connection (or gRPC channel) is served by the worker that
accepted it, as the kernel handed it out: the split over workers is not always even.

Every row runs the same query mix (the questions of ``examples/golden.jsonl``, the reference
question "how do I run phase 0/1/2 tests?" first) with the same budget, from 1, 8 and 32
concurrent clients (threads), after a few warm-up requests per client. Latencies are what the client
observes; req/s is measured requests over the wall time from the start signal to the last
answer. "server ms" is the mean time the server itself recorded for the operation
(``ameide_request_duration_seconds`` from ``/metrics``; one worker only, as scrapes land on any
worker): the rest of the client latency is transport, (de)serialisation on both ends and
queueing. "cpu ms/req" is the CPU time (user + system, from ``/proc``) the server's processes
spent per measured request, and "cores" that CPU time per wall second: on a machine shared with
other work, "cores" shows how much CPU the servers could get, which bounds what more workers
can add (several workers can use N cores only when the machine gives them N). Exits 1 when a
row has no successful request or its reads return no items.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import (
    AbstractAsyncContextManager,
    AbstractContextManager,
    asynccontextmanager,
    contextmanager,
)
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import grpc
import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from prometheus_client.parser import text_string_to_metric_families

from ameide_proto.v1 import projection_pb2, projection_pb2_grpc
from bench.backends import _pg_database
from bench.corpus import generate_documents
from edge.results import as_json
from runtime import App, build_app
from server.workers import default_workers
from service.authz import Caller
from service.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
SEED = 20240601
REPO = "bench/eng/platform"
REFERENCE = "how do I run phase 0/1/2 tests?"
MAX_ITEMS, MAX_CHARS = 8, 6000  # the service's default budget, sent explicitly everywhere
WARMUP = 3  # requests per client before the clock starts
# A server stopping waits for the semantic-embedding batch in progress (up to 120 s on a busy
# machine, service.indexing.semantic.STOP_TIMEOUT) before it exits.
STOP_SECONDS = 150
ADMIN = Caller("user:bench-admin", purpose="bench")
CURATOR = Caller("user:bench-curator", purpose="bench")
PUBLISHER = Caller("user:bench-publisher", purpose="bench")
INGESTOR = Caller("service:bench-ingest", purpose="bench")
READER = Caller("agent:bench-reader", purpose="bench")
_GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]

Call = Callable[[str], int]  # one read of a question; the number of items it returned
AsyncCall = Callable[[str], Awaitable[int]]


# -- content ---------------------------------------------------------------------------------
def questions() -> list[str]:
    """The golden questions, the reference question first."""
    lines = (EXAMPLES / "golden.jsonl").read_text(encoding="utf-8").splitlines()
    golden = [json.loads(line)["query"] for line in lines if line.strip()]
    return [REFERENCE, *(q for q in golden if q != REFERENCE)]


def write_source(target: Path, chunks: int) -> int:
    """A committed git repository: the sample backlog plus synthetic documents under
    ``archive/`` worth about ``chunks`` chunks. Returns the number of markdown files."""
    shutil.copytree(EXAMPLES / "backlog", target)
    archive = target / "archive"
    archive.mkdir()
    added = 0
    documents = generate_documents(SEED)
    while added < chunks:
        doc = next(documents)
        (archive / f"{doc.element_id}.md").write_text(doc.body, encoding="utf-8")
        added += doc.body.count("\n#") + 1
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "bench"]):
        subprocess.run([*_GIT, *args], cwd=target, check=True, capture_output=True)
    return sum(1 for _ in target.rglob("*.md"))


def seed(app: App, source: Path) -> tuple[str, dict[str, Any]]:
    """Roles, the ingested backlog, the published Testing SOP; (reader token, index status)."""
    svc = app.service
    svc.admin.bootstrap_admin(ADMIN.principal_id)
    svc.admin.create_repository(ADMIN, REPO)
    for who, role in [
        (INGESTOR, "ingestor"),
        (CURATOR, "curator"),
        (PUBLISHER, "publisher"),
        (READER, "reader"),
    ]:
        svc.admin.grant(ADMIN, who.principal_id, role, REPO)
    svc.ingest.ingest_backlog(INGESTOR, str(source), REPO)
    sop = (EXAMPLES / "testing-sop.md").read_text(encoding="utf-8")
    svc.elements.create_element(CURATOR, REPO, title="Testing SOP", body=sop, type_key="ameide:sop")
    baseline = svc.publishing.create_baseline(PUBLISHER, REPO, "bench").baseline_id
    svc.publishing.promote(PUBLISHER, baseline, REPO, "bench")
    token = svc.tokens.create(ADMIN, READER.principal_id).token
    return token, as_json(svc.index.index_status(ADMIN))


def _scope() -> dict[str, str]:
    tenant, org, repo = REPO.split("/")
    return {"tenant_id": tenant, "organization_id": org, "repository_id": repo}


def request_body(question: str) -> dict[str, Any]:
    """The §4 read request every JSON surface sends."""
    return {
        "scope": _scope(),
        "query": question,
        "budget": {"max_items": MAX_ITEMS, "max_chars": MAX_CHARS},
    }


# -- the clients -----------------------------------------------------------------------------
@contextmanager
def in_process(app: App) -> Iterator[Call]:
    """``MemoryService.reading.read_context`` called directly."""

    def call(question: str) -> int:
        return len(app.service.reading.read_context(READER, request_body(question)).items)

    yield call


@contextmanager
def rest_client(base: str, token: str) -> Iterator[Call]:
    """``POST /v1/context`` with httpx on one keep-alive connection."""
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=base, headers=headers, timeout=60) as http:

        def call(question: str) -> int:
            response = http.post("/v1/context", json=request_body(question))
            if response.status_code != 200:
                raise RuntimeError(f"HTTP {response.status_code}: {response.text[:200]}")
            return len(response.json()["items"])

        yield call


@contextmanager
def grpc_client(target: str, token: str) -> Iterator[Call]:
    """``ProjectionService.GetReadContext`` through the generated stub on its own channel and
    connection: channels of one process with the same target share one connection (gRPC's
    global subchannel pool), so eight clients were one TCP connection, all to one worker;
    separate client processes each have their own."""
    metadata = (("authorization", f"Bearer {token}"),)
    scope = projection_pb2.Scope(**_scope())
    budget = projection_pb2.Budget(max_items=MAX_ITEMS, max_chars=MAX_CHARS)
    own = [("grpc.use_local_subchannel_pool", 1)]
    with grpc.insecure_channel(target, options=own) as channel:
        stub = projection_pb2_grpc.ProjectionServiceStub(channel)

        def call(question: str) -> int:
            request = projection_pb2.ReadContextRequest(scope=scope, query=question, budget=budget)
            return len(stub.GetReadContext(request, metadata=metadata, timeout=60).items)

        yield call


@contextmanager
def mcp_raw_client(url: str, token: str) -> Iterator[Call]:
    """``memory.get_context`` as one JSON-RPC ``tools/call`` POST per read (the server is
    stateless with JSON responses), with httpx on one keep-alive connection."""
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    counter = iter(range(1, 1 << 62))
    with httpx.Client(headers=headers, timeout=60) as http:

        def call(question: str) -> int:
            arguments = {
                "repository": REPO,
                "query": question,
                "max_items": MAX_ITEMS,
                "max_chars": MAX_CHARS,
            }
            message = {
                "jsonrpc": "2.0",
                "id": next(counter),
                "method": "tools/call",
                "params": {"name": "memory.get_context", "arguments": arguments},
            }
            response = http.post(url, json=message)
            if response.status_code != 200:
                raise RuntimeError(f"HTTP {response.status_code}: {response.text[:200]}")
            result = response.json().get("result") or {}
            if "error" in response.json() or result.get("isError"):
                raise RuntimeError(response.text[:200])
            return len(result["structuredContent"]["items"])

        yield call


@asynccontextmanager
async def mcp_client(url: str, token: str) -> AsyncIterator[AsyncCall]:
    """``memory.get_context`` through one official SDK session over Streamable HTTP."""
    headers = {"Authorization": f"Bearer {token}"}
    repository = REPO
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http), read_timeout_seconds=60) as client,
    ):

        async def call(question: str) -> int:
            arguments = {
                "repository": repository,
                "query": question,
                "max_items": MAX_ITEMS,
                "max_chars": MAX_CHARS,
            }
            result = await client.call_tool("memory.get_context", arguments)
            if result.is_error:
                raise RuntimeError(str(getattr(result.content[0], "text", result.content))[:200])
            return len(result.structured_content["items"])

        yield call


# -- the load --------------------------------------------------------------------------------
@dataclass
class Tally:
    """What the clients of one row measured (shared by their threads)."""

    questions: list[str]
    requests: int
    seconds: list[float] = field(default_factory=list)
    items: int = 0
    errors: int = 0
    first_error: str | None = None
    last_done: float = 0.0
    _next: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self) -> str | None:
        """The next question to ask, or None when the row has asked them all."""
        with self._lock:
            if self._next >= self.requests:
                return None
            self._next += 1
            return self.questions[(self._next - 1) % len(self.questions)]

    def done(self, started: float, items: int | None, error: BaseException | None = None) -> None:
        """Record one measured request."""
        now = time.perf_counter()
        with self._lock:
            self.last_done = max(self.last_done, now)
            if error is not None:
                self.errors += 1
                self.first_error = self.first_error or f"{type(error).__name__}: {error}"
            else:
                self.seconds.append(now - started)
                self.items += items or 0


def _warm_up(call: Call, tally: Tally) -> None:
    for question in tally.questions[:WARMUP]:
        call(question)


def _sync_client(opener: Callable[[], AbstractContextManager[Call]], tally: Tally, go: Any) -> None:
    try:
        with opener() as call:
            _warm_up(call, tally)
            go.wait()
            while (question := tally.take()) is not None:
                started = time.perf_counter()
                try:
                    items = call(question)
                except Exception as exc:
                    tally.done(started, None, exc)
                else:
                    tally.done(started, items)
    except threading.BrokenBarrierError:
        pass
    except Exception as exc:  # the client could not connect or warm up: stop the whole row
        tally.first_error = tally.first_error or f"{type(exc).__name__}: {exc}"
        go.abort()


def _async_client(
    opener: Callable[[], AbstractAsyncContextManager[AsyncCall]], tally: Tally, go: Any
) -> None:
    async def main() -> None:
        async with opener() as call:
            for question in tally.questions[:WARMUP]:
                await call(question)
            await anyio.to_thread.run_sync(go.wait)
            while (asked := tally.take()) is not None:
                started = time.perf_counter()
                try:
                    items = await call(asked)
                except Exception as exc:
                    tally.done(started, None, exc)
                else:
                    tally.done(started, items)

    try:
        anyio.run(main)
    except threading.BrokenBarrierError:
        pass
    except Exception as exc:
        tally.first_error = tally.first_error or f"{type(exc).__name__}: {exc}"
        go.abort()


@dataclass(frozen=True)
class Row:
    """One line of the table (``workers`` is None for the in-process call)."""

    surface: str
    workers: int | None
    clients: int
    requests: int
    ok: int
    errors: int
    items: int
    wall_s: float
    p50_ms: float
    p95_ms: float
    server_ms: float | None
    cpu_ms: float | None  # CPU the server's processes spent per request
    cores: float | None  # CPU seconds the server's processes spent per wall second
    first_error: str | None
    client_cores: float | None = None  # CPU seconds this (client) process spent per wall second


def drive(
    surface: str,
    workers: int | None,
    opener: Callable[[], Any],
    clients: int,
    requests: int,
    asks: list[str],
    *,
    is_async: bool = False,
    server_time: Callable[[], tuple[float, int]] | None = None,
    server_cpu: Callable[[], float] | None = None,
) -> Row:
    """Run ``requests`` reads from ``clients`` concurrent clients; the row it measured."""
    tally = Tally(asks, requests)
    marks: dict[str, Any] = {}

    def start() -> None:  # once every client has warmed up, just before they are let go
        marks["before"] = server_time() if server_time else None
        marks["cpu"] = server_cpu() if server_cpu else None
        marks["client_cpu"] = time.process_time()
        marks["started"] = time.perf_counter()

    go = threading.Barrier(clients + 1, action=start)
    worker = _async_client if is_async else _sync_client
    threads = [
        threading.Thread(target=worker, args=(opener, tally, go), name=f"{surface}-{n}")
        for n in range(clients)
    ]
    for thread in threads:
        thread.start()
    try:
        go.wait(timeout=120)
    except threading.BrokenBarrierError:
        for thread in threads:
            thread.join(timeout=60)
        raise SystemExit(f"{surface}: a client failed to start: {tally.first_error}") from None
    for thread in threads:
        thread.join()
    before, started = marks["before"], marks["started"]
    after = server_time() if server_time else None
    cpu_after = server_cpu() if server_cpu else None
    client_cpu = time.process_time() - marks["client_cpu"]
    server_ms = None
    if before is not None and after is not None and after[1] > before[1]:
        server_ms = (after[0] - before[0]) / (after[1] - before[1]) * 1000
    ordered = sorted(tally.seconds)
    wall = max(tally.last_done - started, 1e-9)
    cpu = None if cpu_after is None or marks["cpu"] is None else cpu_after - marks["cpu"]
    return Row(
        surface,
        workers,
        clients,
        requests,
        len(ordered),
        tally.errors,
        tally.items,
        wall,
        statistics.median(ordered) * 1000 if ordered else float("nan"),
        _p95(ordered) * 1000 if ordered else float("nan"),
        server_ms,
        cpu / len(ordered) * 1000 if cpu is not None and ordered else None,
        cpu / wall if cpu is not None else None,
        tally.first_error,
        client_cpu / wall,
    )


def _p95(ordered: list[float]) -> float:
    return ordered[min(len(ordered) - 1, round(len(ordered) * 0.95))]


# -- the server process ----------------------------------------------------------------------
@dataclass(frozen=True)
class Served:
    """Where the ``ameide serve`` child answers."""

    base: str
    mcp: str
    grpc: str
    metrics: str
    pid: int

    def cpu_seconds(self) -> float:
        """CPU time (user + system) of ``ameide serve`` and its worker processes so far
        (Linux ``/proc``; a worker that was replaced takes its time with it)."""
        return sum(_cpu_seconds(pid) for pid in [self.pid, *_children(self.pid)])


def _ameide() -> list[str]:
    script = Path(sys.executable).parent / "ameide"
    if script.exists():
        return [str(script)]
    launch = "import sys; sys.argv[0] = 'ameide'; import cli.main; cli.main.run()"
    return [sys.executable, "-c", launch]


@contextmanager
def served(settings: Settings, log: Path, workers: int = 1) -> Iterator[Served]:
    """``ameide serve --workers W`` on free loopback ports in a child process, ready (every
    worker); stopped by SIGINT."""
    argv = [*_ameide(), "--home", str(settings.home), "--as", ADMIN.principal_id, "--json"]
    if settings.database_url:
        argv += ["--database-url", settings.database_url]
    argv += ["serve", "--host", "127.0.0.1", "--port", "0", "--grpc-port", "0", "--grace", "5"]
    argv += ["--metrics-public"]  # the benchmark reads server-side time from /metrics
    argv += ["--workers", str(workers)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("AMEIDE_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    with log.open("wb") as stderr:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=stderr, env=env, cwd=ROOT)
    try:
        endpoints = _announced(proc, log)
        base = endpoints["rest"].removesuffix("/v1")
        _wait_ready(proc, base, log)
        yield Served(base, endpoints["mcp"], endpoints["grpc"], endpoints["metrics"], proc.pid)
    finally:
        _stop(proc, log)


def _stat(pid: int) -> list[str]:
    """The fields of ``/proc/PID/stat`` after the command name ([] when it is gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return []


def _children(pid: int) -> list[int]:
    proc = Path("/proc")
    return [
        int(entry.name)
        for entry in (proc.iterdir() if proc.is_dir() else [])
        if entry.name.isdigit() and (_stat(int(entry.name))[1:2] or [""])[0] == str(pid)
    ]


def _cpu_seconds(pid: int) -> float:
    fields = _stat(pid)
    if len(fields) < 13:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _announced(proc: subprocess.Popen[bytes], log: Path) -> dict[str, str]:
    """The endpoints the child prints (one JSON document on stdout) once it listens."""
    lines: queue.Queue[bytes] = queue.Queue()
    assert proc.stdout is not None
    stdout = proc.stdout

    def pump() -> None:
        for line in stdout:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    text, deadline = "", time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            text += lines.get(timeout=0.2).decode()
        except queue.Empty:
            if proc.poll() is not None:
                break
            continue
        try:
            found: dict[str, str] = json.loads(text)
            return found
        except json.JSONDecodeError:
            continue
    raise SystemExit(f"ameide serve did not announce its endpoints:\n{_tail(log)}")


def _wait_ready(proc: subprocess.Popen[bytes], base: str, log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if httpx.get(f"{base}/readyz", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"ameide serve is not ready at {base}/readyz:\n{_tail(log)}")


def _stop(proc: subprocess.Popen[bytes], log: Path) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise SystemExit(f"ameide serve did not stop on SIGINT:\n{_tail(log)}") from None
    # SIGINT: uvicorn drains HTTP, gRPC drains, and the interrupt ends the CLI with 130 (one
    # process) or the supervisor exits 0 once every worker has drained (several).
    clean = proc.returncode in (0, 130) and "Traceback" not in _tail(log, 10_000)
    if not clean:
        raise SystemExit(f"ameide serve exited {proc.returncode}:\n{_tail(log)}")


def _tail(log: Path, lines: int = 20) -> str:
    text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
    return "\n".join(text.splitlines()[-lines:])


def server_time(metrics_url: str, surface: str) -> Callable[[], tuple[float, int]]:
    """Reads (total seconds, count) of the busiest operation of ``surface`` from /metrics."""

    def read() -> tuple[float, int]:
        sums: dict[str, float] = {}
        counts: dict[str, float] = {}
        text = httpx.get(metrics_url, timeout=10).text
        for family in text_string_to_metric_families(text):
            if family.name != "ameide_request_duration_seconds":
                continue
            for sample in family.samples:
                if sample.labels.get("surface") != surface:
                    continue
                operation = sample.labels.get("operation", "")
                if sample.name.endswith("_sum"):
                    sums[operation] = sample.value
                elif sample.name.endswith("_count"):
                    counts[operation] = sample.value
        if not counts:
            return 0.0, 0
        busiest = max(counts, key=lambda op: counts[op])
        return sums.get(busiest, 0.0), int(counts[busiest])

    return read


# -- the run ---------------------------------------------------------------------------------
SURFACES = ("rest", "grpc", "mcp")


def row_requests(requests: int | None, clients: int) -> int:
    """Measured requests of a row: ``requests``, else 200 and at least 8 per client."""
    return requests if requests is not None else max(200, 8 * clients)


def run(
    requests: int | None,
    clients: list[int],
    chunks: int,
    postgres: bool,
    workers: list[int],
    *,
    mcp_sdk: bool = False,
    in_process_rows: bool = True,
    surfaces: tuple[str, ...] = SURFACES,
    out: Any = sys.stdout,
) -> list[Row]:
    """Seed, measure every surface at every concurrency against each worker count, return the
    rows (printing progress)."""
    asks = questions()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="ameide-bench-surface-") as directory:
        tmp = Path(directory)
        settings, drop = Settings(home=tmp / "home"), None
        if postgres:
            pg = _pg_database()
            if isinstance(pg, str):
                raise SystemExit(f"--postgres: {pg}")
            settings, drop = Settings(home=tmp / "home", database_url=pg[0]), pg[1]
        try:
            started = time.perf_counter()
            files = write_source(tmp / "source", chunks)
            app = build_app(settings, migrate=True)
            try:
                token, index = seed(app, tmp / "source")
                if app.semantic is not None:  # embed now: the servers must not embed while timed
                    embedding = time.perf_counter()
                    app.semantic.build()
                    print(
                        f"embedded the seeded chunks in {time.perf_counter() - embedding:.1f} s",
                        file=out,
                        flush=True,
                    )
                print(
                    f"seeded {files} files, {index['indexed_chunks']:,} chunks "
                    f"({'postgresql' if postgres else 'sqlite'}) "
                    f"in {time.perf_counter() - started:.1f} s",
                    file=out,
                    flush=True,
                )
                for n in clients if in_process_rows else []:
                    rows.append(
                        drive(
                            "in-process",
                            None,
                            lambda: in_process(app),
                            n,
                            row_requests(requests, n),
                            asks,
                        )
                    )
                    _progress(rows[-1], out)
            finally:
                app.close()
            for count in workers:
                with served(settings, tmp / f"serve-{count}.log", count) as s:
                    rows += _surfaces(
                        s, token, count, clients, requests, asks, mcp_sdk, surfaces, out
                    )
        finally:
            if drop is not None:
                drop()
    return rows


def _surfaces(
    s: Served,
    token: str,
    workers: int,
    clients: list[int],
    requests: int | None,
    asks: list[str],
    mcp_sdk: bool,
    only: tuple[str, ...],
    out: Any,
) -> list[Row]:
    """The ``only`` surfaces of one running server at every concurrency."""
    mcp: tuple[str, str, Callable[[], Any], bool] = (
        ("MCP/HTTP", "mcp", lambda: mcp_client(s.mcp, token), True)
        if mcp_sdk
        else ("MCP/HTTP", "mcp", lambda: mcp_raw_client(s.mcp, token), False)
    )
    surfaces: list[tuple[str, str, Callable[[], Any], bool]] = [
        ("REST", "rest", lambda: rest_client(s.base, token), False),
        ("gRPC", "grpc", lambda: grpc_client(s.grpc, token), False),
        mcp,
    ]
    rows = []
    for name, label, opener, is_async in surfaces:
        if label not in only:
            continue
        for n in clients:
            rows.append(
                drive(
                    name,
                    workers,
                    opener,
                    n,
                    row_requests(requests, n),
                    asks,
                    is_async=is_async,
                    # /metrics counts per worker: a scrape before and after could come from
                    # different workers, so the server's own time is only read from one
                    server_time=server_time(s.metrics, label) if workers == 1 else None,
                    server_cpu=s.cpu_seconds if Path("/proc/self/stat").exists() else None,
                )
            )
            _progress(rows[-1], out)
    return rows


def _progress(row: Row, out: Any) -> None:
    workers = "" if row.workers is None else f" (workers {row.workers})"
    print(
        f"  {row.surface}{workers} x{row.clients}: {row.ok}/{row.requests} ok, "
        f"{row.ok / row.wall_s:,.1f} req/s",
        file=out,
        flush=True,
    )


def table(rows: list[Row]) -> str:
    """The result table, with each row's p50 beside the in-process p50 at the same concurrency."""
    local = {r.clients: r.p50_ms for r in rows if r.surface == "in-process"}
    header = (
        "surface", "workers", "clients", "requests", "req/s", "p50 ms", "p95 ms", "server ms",
        "cpu ms/req", "cores", "client cores", "p50 vs in-proc", "items/req", "errors",
    )  # fmt: skip
    lines = [header]
    for r in rows:
        base = local.get(r.clients)
        lines.append(
            (
                r.surface,
                "-" if r.workers is None else str(r.workers),
                str(r.clients),
                str(r.requests),
                f"{r.ok / r.wall_s:,.1f}",
                f"{r.p50_ms:,.1f}",
                f"{r.p95_ms:,.1f}",
                "-" if r.server_ms is None else f"{r.server_ms:,.1f}",
                "-" if r.cpu_ms is None else f"{r.cpu_ms:,.1f}",
                "-" if r.cores is None else f"{r.cores:.2f}",
                "-" if r.client_cores is None else f"{r.client_cores:.2f}",
                "-" if r.surface == "in-process" or not base else f"x{r.p50_ms / base:,.2f}",
                f"{r.items / r.ok:.1f}" if r.ok else "-",
                str(r.errors),
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    rendered = [
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(line, widths, strict=True))
        )
        for line in lines
    ]
    rendered.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(rendered)


SCALING_CLIENTS = 8
MIN_SPEEDUP = 1.6
MAX_P95_GROWTH = 3.0


def scaling(rows: list[Row]) -> list[str]:
    """The issue-11 checks on REST, as lines to print: throughput at 8 clients with the most
    workers against one worker (target at least x1.6), and with the most workers, p95 at 8
    clients against p95 at 1 client (target at most x3). Reported, never a failure: a shared
    machine makes them noisy."""
    rest = {(r.workers, r.clients): r for r in rows if r.surface == "REST" and r.ok}
    most = max((w for w, _ in rest if w is not None), default=None)
    lines = []
    one, many = rest.get((1, SCALING_CLIENTS)), rest.get((most, SCALING_CLIENTS))
    if one and many and most and most > 1:
        speedup = (many.ok / many.wall_s) / (one.ok / one.wall_s)
        verdict = "met" if speedup >= MIN_SPEEDUP else "NOT met"
        lines.append(
            f"REST x{SCALING_CLIENTS} clients: --workers {most} {many.ok / many.wall_s:,.1f} "
            f"req/s vs --workers 1 {one.ok / one.wall_s:,.1f} req/s = x{speedup:.2f} "
            f"(target >= x{MIN_SPEEDUP}: {verdict})"
        )
    if one and many and one.cores is not None and many.cores is not None:
        lines.append(
            f"  server CPU: --workers 1 used {one.cores:.2f} cores ({one.cpu_ms:,.1f} ms/req), "
            f"--workers {most} used {many.cores:.2f} cores ({many.cpu_ms:,.1f} ms/req)"
        )
    single = rest.get((most, 1))
    if many and single:
        growth = many.p95_ms / single.p95_ms
        verdict = "met" if growth <= MAX_P95_GROWTH else "NOT met"
        lines.append(
            f"REST --workers {most}: p95 x{SCALING_CLIENTS} clients {many.p95_ms:,.1f} ms vs "
            f"x1 client {single.p95_ms:,.1f} ms = x{growth:.2f} "
            f"(target <= x{MAX_P95_GROWTH}: {verdict})"
        )
    return lines


def failures(rows: list[Row]) -> list[str]:
    """Why the run failed: rows with no successful request or no items at all."""
    found = []
    for r in rows:
        name = r.surface if r.workers is None else f"{r.surface} (workers {r.workers})"
        if r.ok == 0:
            found.append(f"{name} x{r.clients}: every request failed ({r.first_error})")
        elif r.items == 0:
            found.append(f"{name} x{r.clients}: no read returned an item")
        elif r.errors:
            print(f"warning: {name} x{r.clients}: {r.errors} errors, first: {r.first_error}")
    return found


def main(argv: list[str] | None = None) -> int:
    cores = default_workers()
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0].replace("\n", " "),
        epilog="Example: python -m bench.bench_surface --clients 1 8 --workers 1 2",
    )
    parser.add_argument(
        "--requests",
        type=int,
        default=None,
        help="measured requests per row (default 200, and at least 8 per client)",
    )
    parser.add_argument(
        "--clients",
        type=int,
        nargs="+",
        default=[1, 8, 32],
        help="concurrent clients (default 1 8 32)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        nargs="+",
        default=sorted({1, cores}),
        help=f"ameide serve --workers counts to compare (default 1 {cores}: 1 and the cores)",
    )
    parser.add_argument(
        "--chunks",
        type=int,
        default=None,
        help="synthetic chunks added to the sample backlog (default 3000)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: 24 requests, sample backlog only"
    )
    parser.add_argument(
        "--postgres", action="store_true", help="PostgreSQL at AMEIDE_BENCH_POSTGRES_URL"
    )
    parser.add_argument(
        "--mcp-sdk",
        action="store_true",
        help="drive MCP with the official SDK client (a session per client) instead of plain "
        "JSON-RPC POSTs",
    )
    parser.add_argument(
        "--surfaces",
        nargs="+",
        choices=SURFACES,
        default=list(SURFACES),
        help="the network surfaces to measure (default: rest grpc mcp)",
    )
    parser.add_argument("--no-in-process", action="store_true", help="skip the in-process rows")
    args = parser.parse_args(argv)
    requests = args.requests or (24 if args.quick else None)
    chunks = args.chunks if args.chunks is not None else (0 if args.quick else 3000)
    rows = run(
        requests,
        args.clients,
        chunks,
        args.postgres,
        args.workers,
        mcp_sdk=args.mcp_sdk,
        in_process_rows=not args.no_in_process,
        surfaces=tuple(args.surfaces),
    )
    print()
    print(table(rows))
    checks = scaling(rows)
    if checks:
        print()
        print("\n".join(checks))
    problems = failures(rows)
    for problem in problems:
        print(f"FAILED: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
