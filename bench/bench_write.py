"""Write-path benchmark: governed writes per second and the cost of ``as_of`` resolution.

Run: ``.venv/bin/python -m bench.bench_write`` (``--quick`` for a short run, ``--help`` for the
options). Prints a table: propose+accept pairs per second with 1 and 4 writer threads, alone and
beside 2 threads calling ``read_context``; per pair p50/p95, per read p50/p95, and the keyword
index's lag when the writers finished (writes return before the background upkeep applies them)
and how long it then took to apply it. PostgreSQL rows need a server at
AMEIDE_BENCH_POSTGRES_URL (default 127.0.0.1:5432, user postgres); they are reported as skipped
when it is unreachable.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import random
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import sqlalchemy as sa

from bench.backends import backends
from bench.tables import columns
from domain.errors import NotFound
from edge.results import as_json
from runtime import App, build_app
from service.authz import Caller

ADMIN = Caller("user:admin", purpose="bench")
CURATOR = Caller("user:curator", purpose="bench")
AGENT = Caller("agent:bench", purpose="bench")
BODY = "# Runbook\n\n## Steps\n\n" + "\n".join(f"{i}. step {i} of the runbook" for i in range(40))


def _setup(app: App, repo: str) -> None:
    svc = app.service
    svc.admin.bootstrap_admin(ADMIN.principal_id)
    svc.admin.create_repository(ADMIN, repo)
    svc.admin.grant(ADMIN, CURATOR.principal_id, "curator", repo)
    svc.admin.grant(ADMIN, AGENT.principal_id, "agent", repo)


@dataclass
class WriteRun:
    """One governed-write measurement."""

    writers: int
    readers: int
    pairs: int
    seconds: float
    pair_ms: list[float]
    read_ms: list[float]
    lag_entries: int  # outbox rows the keyword index had not applied when the writers finished
    lag_age: float | None  # seconds the oldest of them had waited
    drained_in: float  # seconds the background upkeep then took to apply them


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(q * len(ordered)) - 1))]


def governed_writes(
    app: App,
    repo: str,
    writers: int,
    per_writer: int,
    readers: int = 0,
    profile: cProfile.Profile | None = None,
) -> WriteRun:
    """propose + accept pairs: each writer thread evolves its own element; ``readers`` threads
    call ``read_context`` (a keyword query over the repository's heads) as long as they run."""
    svc = app.service
    elements = []
    for t in range(writers):
        out = as_json(svc.elements.create_element(CURATOR, repo, title=f"Runbook {t}", body=BODY))
        elements.append((out["element"]["element_id"], out["version"]["version_id"]))
    _settled(app)
    barrier = threading.Barrier(writers + readers + 1)
    pair_ms: list[list[float]] = [[] for _ in range(writers)]
    read_ms: list[list[float]] = [[] for _ in range(readers)]
    writing = threading.Event()
    writing.set()

    def write(idx: int) -> None:
        element_id, head = elements[idx]
        barrier.wait()
        if profile is not None and idx == 0:
            profile.enable()  # cProfile follows the thread that enables it: the first writer
        for n in range(per_writer):
            t0 = time.perf_counter()
            p = svc.curation.propose(
                AGENT,
                repo,
                element_id=element_id,
                target_version_id=head,
                body=f"{BODY}\n\nrevision {n}\n",
                summary=f"revision {n}",
            )
            head = svc.review.accept(CURATOR, p.proposal_id).result_version_id
            pair_ms[idx].append((time.perf_counter() - t0) * 1000)
        if profile is not None and idx == 0:
            profile.disable()

    def read(idx: int) -> None:
        tenant, org, repository = repo.split("/")
        scope = {"tenant_id": tenant, "organization_id": org, "repository_id": repository}
        ask = {"scope": scope, "selector": {"kind": "head"}, "query": "runbook step"}
        barrier.wait()
        while writing.is_set():
            t0 = time.perf_counter()
            svc.reading.read_context(AGENT, ask)
            read_ms[idx].append((time.perf_counter() - t0) * 1000)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(writers)]
    threads += [threading.Thread(target=read, args=(i,)) for i in range(readers)]
    for w in threads:
        w.start()
    barrier.wait()
    started = time.perf_counter()
    for w in threads[:writers]:
        w.join()
    seconds = time.perf_counter() - started
    writing.clear()
    for w in threads[writers:]:
        w.join()
    lag = app.indexer.status() if app.indexer is not None else {"pending": 0}
    t0 = time.perf_counter()
    _settled(app)
    return WriteRun(
        writers, readers, writers * per_writer, seconds,
        [m for ms in pair_ms for m in ms], [m for ms in read_ms for m in ms],
        lag["pending"], lag.get("oldest_pending_age_seconds"), time.perf_counter() - t0,
    )  # fmt: skip


def _settled(app: App) -> None:
    """Wait until the keyword index applied every write so far (background upkeep)."""
    wait_idle = getattr(app.status_upkeep, "wait_idle", None)
    if wait_idle is not None:
        wait_idle(120)
    app.reads.catch_up_index()


def _write_row(name: str, r: WriteRun) -> tuple[str, str, str]:
    measure = f"governed writes, {r.writers} writer(s)" + (
        f" + {r.readers} reader(s)" if r.readers else ""
    )
    result = (
        f"{r.pairs / r.seconds:,.1f} pairs/s; pair p50 {statistics.median(r.pair_ms):.1f} ms"
        f" p95 {_percentile(r.pair_ms, 0.95):.1f} ms"
    )
    if r.read_ms:
        result += (
            f"; read p50 {statistics.median(r.read_ms):.1f} ms"
            f" p95 {_percentile(r.read_ms, 0.95):.1f} ms ({len(r.read_ms)} reads)"
        )
    age = "" if r.lag_age is None else f", oldest {r.lag_age:.2f} s"
    result += f"; index lag at end {r.lag_entries} entries{age}, applied {r.drained_in:.2f} s later"
    return (name, measure, result)


def seed_versions(app: App, repo: str, total: int, per_element: int) -> list[datetime]:
    """Write ``total`` versions straight through the unit of work (fast seeding, not governed);
    returns the instants at which they were recorded."""
    from domain.model import Element, Provenance
    from domain.values import Classification, SourceKind

    prov = Provenance("user", CURATOR.principal_id)
    instants: list[datetime] = []
    with app.uow() as uow:
        for e in range(total // per_element):
            el = Element.new(
                repo,
                kind="DOCUMENT",
                type_key="ameide:doc",
                source_kind=SourceKind.CANONICAL,
                classification=Classification.INTERNAL,
                at=app.clock.now(),
                by=CURATOR.principal_id,
            )
            uow.store.insert_element(el)
            for n in range(per_element):
                v = el.next_version(
                    title=f"Doc {e}",
                    body=f"{BODY}\n{n}\n",
                    metadata={},
                    at=app.clock.now(),
                    provenance=prov,
                )
                uow.store.move_head(el.element_id, el.head_version_id, v)
                uow.store.insert_version(v)
                el.head_version_id, el.head_seq = v.version_id, v.seq
                instants.append(v.recorded_at)
        uow.commit()
    return instants


def as_of_cost(app: App, repo: str, versions: int, samples: int) -> tuple[float, float]:
    """p50 / p95 milliseconds of resolving an element's head as of a random past instant."""
    instants = seed_versions(app, repo, versions, per_element=100)
    with app.uow(readonly=True) as uow:
        ids = [
            r.element_id
            for r in uow.store.conn.execute(
                sa.text(
                    "select element_id from elements"
                    " where repo_key = :r and type_key = 'ameide:doc'"
                ),
                {"r": repo},
            )
        ]
    rng = random.Random(7)
    timings = []
    for _ in range(samples):
        element_id, at = rng.choice(ids), rng.choice(instants)
        t0 = time.perf_counter()
        # An element created after the instant resolves to NOT_FOUND: still a resolution.
        with contextlib.suppress(NotFound):
            app.service.elements.get_element(CURATOR, element_id, as_of=at)
        timings.append((time.perf_counter() - t0) * 1000)
    timings.sort()
    return statistics.median(timings), timings[int(len(timings) * 0.95) - 1]


SCENARIOS = ((1, 0), (4, 0), (1, 2), (4, 2))
"""(writer threads, reader threads) of the governed-write rows."""


def run(
    quick: bool,
    pairs: int | None = None,
    only: str | None = None,
    as_of: bool = True,
    profile: Path | None = None,
    background: bool = True,
) -> list[tuple[str, str, str]]:
    """Measure every row of the table (``only``: one backend; ``profile``: cProfile the
    single-writer run without readers into that file, per backend; ``background=False``: no
    index upkeep or embedding thread beside the writers, the write path's cost alone)."""
    per_writer = pairs or (20 if quick else 100)
    versions, samples = (2_000, 100) if quick else (10_000, 500)
    rows: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        found, skipped = backends(Path(tmp), postgres=only in (None, "postgresql"))
        if only in (None, "postgresql"):
            rows.extend(("postgresql", "all", note) for note in skipped)
        for name, settings, drop in found:
            if only is not None and name != only:
                if drop:
                    drop()
                continue
            app = build_app(settings, migrate=True, background=background)
            try:
                _setup(app, "bench/eng/writes")
                for n, (writers, readers) in enumerate(SCENARIOS):
                    repo = f"bench/eng/writes{n}"
                    _setup(app, repo)
                    if profile is not None and (writers, readers) == (1, 0):
                        prof = cProfile.Profile()
                        result = governed_writes(app, repo, writers, per_writer, readers, prof)
                        prof.dump_stats(f"{profile}.{name}")
                    else:
                        result = governed_writes(app, repo, writers, per_writer, readers)
                    rows.append(_write_row(name, result))
                if as_of:
                    _setup(app, "bench/eng/asof")
                    p50, p95 = as_of_cost(app, "bench/eng/asof", versions, samples)
                    rows.append(
                        (
                            name,
                            f"as_of head resolution, {versions:,} versions: p50 / p95",
                            f"{p50:.2f} ms / {p95:.2f} ms",
                        )
                    )
            finally:
                app.close()
                if drop:
                    drop()
    return rows


def main() -> None:
    """Parse arguments, run, print the table."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer writes and versions")
    parser.add_argument("--pairs", type=int, help="propose+accept pairs per writer thread")
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), help="only this one")
    parser.add_argument("--no-as-of", action="store_true", help="skip the as_of rows")
    parser.add_argument(
        "--profile", type=Path, help="cProfile the 1-writer run into PROFILE.<backend>"
    )
    parser.add_argument(
        "--no-background",
        action="store_true",
        help="no background index upkeep or embedding beside the writers (as a one-shot CLI "
        "command runs): the write path's own cost; reads then apply the outbox themselves",
    )
    args = parser.parse_args()
    rows = run(
        args.quick, args.pairs, args.backend, not args.no_as_of, args.profile,
        background=not args.no_background,
    )  # fmt: skip
    print(columns(("backend", "measure", "result"), rows))


if __name__ == "__main__":
    main()
