"""Surface benchmark: ``read_context`` through REST, gRPC and MCP over HTTP beside in-process.

Run: ``.venv/bin/python -m bench.bench_surface`` (``--quick`` for a smoke run). Prints a table.

It seeds a temporary home (SQLite; ``--postgres`` puts the database in a fresh PostgreSQL one
at AMEIDE_BENCH_POSTGRES_URL instead) with the sample backlog of ``examples/backlog`` ingested
as evidence, padded with synthetic documents from ``bench.corpus`` to about ``--chunks`` more
chunks, and the Testing SOP of ``examples/testing-sop.md`` written as canonical and published.
A reader principal gets a bearer token. The in-process ``MemoryService.read_context`` is timed
first; then ``ameide serve`` starts as a separate process on free loopback ports (so the load
generator does not share the server's GIL) and the same read is timed through REST
(``POST /v1/context`` with httpx), gRPC (``GetReadContext`` through the generated stub, a channel
per client) and MCP over Streamable HTTP (``memory.get_context`` with the official SDK client,
a session per client).

Every row runs the same query mix (the questions of ``examples/golden.jsonl``, the reference
question "how do I run phase 0/1/2 tests?" first) with the same budget, from 1 and 8 concurrent
clients (threads), after a few warm-up requests per client. Latencies are what the client
observes; req/s is measured requests over the wall time from the start signal to the last
answer. "server ms" is the mean time the server itself recorded for the operation
(``ameide_request_duration_seconds`` from ``/metrics``): the rest of the client latency is
transport, (de)serialisation on both ends and queueing. Exits 1 when a row has no successful
request or its reads return no items.
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
from runtime import App, build_app
from service.authz import Caller
from service.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
SEED = 20240601
REPO = "bench/eng/platform"
REFERENCE = "how do I run phase 0/1/2 tests?"
MAX_ITEMS, MAX_CHARS = 8, 6000  # the service's default budget, sent explicitly everywhere
WARMUP = 3  # requests per client before the clock starts
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
    svc.bootstrap_admin(ADMIN.principal_id)
    svc.create_repository(ADMIN, REPO)
    for who, role in [
        (INGESTOR, "ingestor"),
        (CURATOR, "curator"),
        (PUBLISHER, "publisher"),
        (READER, "reader"),
    ]:
        svc.grant(ADMIN, who.principal_id, role, REPO)
    svc.ingest_backlog(INGESTOR, str(source), REPO)
    sop = (EXAMPLES / "testing-sop.md").read_text(encoding="utf-8")
    svc.create_element(CURATOR, REPO, title="Testing SOP", body=sop, type_key="ameide:sop")
    baseline = svc.create_baseline(PUBLISHER, REPO, "bench")["baseline_id"]
    svc.promote(PUBLISHER, baseline, REPO, "bench")
    token = svc.create_token(ADMIN, READER.principal_id)["token"]
    return token, svc.index_status(ADMIN)


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
    """``MemoryService.read_context`` called directly."""

    def call(question: str) -> int:
        return len(app.service.read_context(READER, request_body(question))["items"])

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
    """``ProjectionService.GetReadContext`` through the generated stub on its own channel."""
    metadata = (("authorization", f"Bearer {token}"),)
    scope = projection_pb2.Scope(**_scope())
    budget = projection_pb2.Budget(max_items=MAX_ITEMS, max_chars=MAX_CHARS)
    with grpc.insecure_channel(target) as channel:
        stub = projection_pb2_grpc.ProjectionServiceStub(channel)

        def call(question: str) -> int:
            request = projection_pb2.ReadContextRequest(scope=scope, query=question, budget=budget)
            return len(stub.GetReadContext(request, metadata=metadata, timeout=60).items)

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
    """One line of the table."""

    surface: str
    clients: int
    requests: int
    ok: int
    errors: int
    items: int
    wall_s: float
    p50_ms: float
    p95_ms: float
    server_ms: float | None
    first_error: str | None


def drive(
    surface: str,
    opener: Callable[[], Any],
    clients: int,
    requests: int,
    asks: list[str],
    *,
    is_async: bool = False,
    server_time: Callable[[], tuple[float, int]] | None = None,
) -> Row:
    """Run ``requests`` reads from ``clients`` concurrent clients; the row it measured."""
    tally = Tally(asks, requests)
    marks: dict[str, Any] = {}

    def start() -> None:  # once every client has warmed up, just before they are let go
        marks["before"] = server_time() if server_time else None
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
    server_ms = None
    if before is not None and after is not None and after[1] > before[1]:
        server_ms = (after[0] - before[0]) / (after[1] - before[1]) * 1000
    ordered = sorted(tally.seconds)
    return Row(
        surface,
        clients,
        requests,
        len(ordered),
        tally.errors,
        tally.items,
        max(tally.last_done - started, 1e-9),
        statistics.median(ordered) * 1000 if ordered else float("nan"),
        _p95(ordered) * 1000 if ordered else float("nan"),
        server_ms,
        tally.first_error,
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


def _ameide() -> list[str]:
    script = Path(sys.executable).parent / "ameide"
    if script.exists():
        return [str(script)]
    launch = "import sys; sys.argv[0] = 'ameide'; import cli.main; cli.main.run()"
    return [sys.executable, "-c", launch]


@contextmanager
def served(settings: Settings, log: Path) -> Iterator[Served]:
    """``ameide serve`` on free loopback ports in a child process, ready; stopped by SIGINT."""
    argv = [*_ameide(), "--home", str(settings.home), "--as", ADMIN.principal_id, "--json"]
    if settings.database_url:
        argv += ["--database-url", settings.database_url]
    argv += ["serve", "--host", "127.0.0.1", "--port", "0", "--grpc-port", "0", "--grace", "5"]
    argv += ["--metrics-public"]  # the benchmark reads server-side time from /metrics
    env = {k: v for k, v in os.environ.items() if not k.startswith("AMEIDE_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    with log.open("wb") as stderr:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=stderr, env=env, cwd=ROOT)
    try:
        endpoints = _announced(proc, log)
        base = endpoints["rest"].removesuffix("/v1")
        _wait_ready(proc, base, log)
        yield Served(base, endpoints["mcp"], endpoints["grpc"], endpoints["metrics"])
    finally:
        _stop(proc, log)


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
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise SystemExit(f"ameide serve did not stop on SIGINT:\n{_tail(log)}") from None
    # SIGINT: uvicorn drains HTTP, gRPC drains, and the interrupt ends the CLI with 130.
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
def run(
    requests: int, clients: list[int], chunks: int, postgres: bool, out: Any = sys.stdout
) -> list[Row]:
    """Seed, measure every surface at every concurrency, return the rows (printing progress)."""
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
                print(
                    f"seeded {files} files, {index['indexed_chunks']:,} chunks "
                    f"({'postgresql' if postgres else 'sqlite'}) "
                    f"in {time.perf_counter() - started:.1f} s",
                    file=out,
                    flush=True,
                )
                for n in clients:
                    rows.append(drive("in-process", lambda: in_process(app), n, requests, asks))
                    _progress(rows[-1], out)
            finally:
                app.close()
            with served(settings, tmp / "serve.log") as s:
                surfaces: list[tuple[str, str, Callable[[], Any], bool]] = [
                    ("REST", "rest", lambda: rest_client(s.base, token), False),
                    ("gRPC", "grpc", lambda: grpc_client(s.grpc, token), False),
                    ("MCP/HTTP", "mcp", lambda: mcp_client(s.mcp, token), True),
                ]
                for name, label, opener, is_async in surfaces:
                    for n in clients:
                        rows.append(
                            drive(
                                name,
                                opener,
                                n,
                                requests,
                                asks,
                                is_async=is_async,
                                server_time=server_time(s.metrics, label),
                            )
                        )
                        _progress(rows[-1], out)
        finally:
            if drop is not None:
                drop()
    return rows


def _progress(row: Row, out: Any) -> None:
    print(f"  {row.surface} x{row.clients}: {row.ok}/{row.requests} ok", file=out, flush=True)


def table(rows: list[Row]) -> str:
    """The result table, with each row's p50 beside the in-process p50 at the same concurrency."""
    local = {r.clients: r.p50_ms for r in rows if r.surface == "in-process"}
    header = (
        "surface", "clients", "requests", "req/s", "p50 ms", "p95 ms", "server ms",
        "p50 vs in-proc", "items/req", "errors",
    )  # fmt: skip
    lines = [header]
    for r in rows:
        base = local.get(r.clients)
        lines.append(
            (
                r.surface,
                str(r.clients),
                str(r.requests),
                f"{r.ok / r.wall_s:,.1f}",
                f"{r.p50_ms:,.1f}",
                f"{r.p95_ms:,.1f}",
                "-" if r.server_ms is None else f"{r.server_ms:,.1f}",
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


def failures(rows: list[Row]) -> list[str]:
    """Why the run failed: rows with no successful request or no items at all."""
    found = []
    for r in rows:
        if r.ok == 0:
            found.append(f"{r.surface} x{r.clients}: every request failed ({r.first_error})")
        elif r.items == 0:
            found.append(f"{r.surface} x{r.clients}: no read returned an item")
        elif r.errors:
            print(f"warning: {r.surface} x{r.clients}: {r.errors} errors, first: {r.first_error}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--requests", type=int, default=None, help="measured requests per row (default 200)"
    )
    parser.add_argument(
        "--clients", type=int, nargs="+", default=[1, 8], help="concurrent clients (default 1 8)"
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
    args = parser.parse_args(argv)
    requests = args.requests or (24 if args.quick else 200)
    chunks = args.chunks if args.chunks is not None else (0 if args.quick else 3000)
    rows = run(requests, args.clients, chunks, args.postgres)
    print()
    print(table(rows))
    problems = failures(rows)
    for problem in problems:
        print(f"FAILED: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
