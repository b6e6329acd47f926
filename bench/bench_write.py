"""Write-path benchmark: governed writes per second and the cost of ``as_of`` resolution.

Run: ``.venv/bin/python -m bench.bench_write`` (``--quick`` for a short run). Prints a table.
PostgreSQL rows need a server at AMEIDE_BENCH_POSTGRES_URL (default 127.0.0.1:5432, user
postgres); they are reported as skipped when it is unreachable.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import statistics
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

import sqlalchemy as sa

from bench.backends import backends
from domain.errors import NotFound
from runtime import App, build_app
from service.authz import Caller

ADMIN = Caller("user:admin", purpose="bench")
CURATOR = Caller("user:curator", purpose="bench")
AGENT = Caller("agent:bench", purpose="bench")
BODY = "# Runbook\n\n## Steps\n\n" + "\n".join(f"{i}. step {i} of the runbook" for i in range(40))


def _setup(app: App, repo: str) -> None:
    svc = app.service
    svc.bootstrap_admin(ADMIN.principal_id)
    svc.create_repository(ADMIN, repo)
    svc.grant(ADMIN, CURATOR.principal_id, "curator", repo)
    svc.grant(ADMIN, AGENT.principal_id, "agent", repo)


def governed_writes(app: App, repo: str, threads: int, per_thread: int) -> float:
    """propose + accept pairs per second; each thread evolves its own element."""
    svc = app.service
    elements = []
    for t in range(threads):
        out = svc.create_element(CURATOR, repo, title=f"Runbook {t}", body=BODY)
        elements.append((out["element"]["element_id"], out["version"]["version_id"]))
    barrier = threading.Barrier(threads)

    def work(idx: int) -> None:
        element_id, head = elements[idx]
        barrier.wait()
        for n in range(per_thread):
            p = svc.propose(
                AGENT,
                repo,
                element_id=element_id,
                target_version_id=head,
                body=f"{BODY}\n\nrevision {n}\n",
                summary=f"revision {n}",
            )
            head = svc.accept(CURATOR, p["proposal_id"])["result_version_id"]

    started = time.perf_counter()
    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return threads * per_thread / (time.perf_counter() - started)


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
            app.service.get_element(CURATOR, element_id, as_of=at)
        timings.append((time.perf_counter() - t0) * 1000)
    timings.sort()
    return statistics.median(timings), timings[int(len(timings) * 0.95) - 1]


def run(quick: bool) -> list[tuple[str, str, str]]:
    """Measure every row of the table."""
    per_thread = 10 if quick else 50
    versions, samples = (2_000, 100) if quick else (10_000, 500)
    rows: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        found, skipped = backends(Path(tmp))
        rows.extend(("postgresql", "all", note) for note in skipped)
        for name, settings, drop in found:
            app = build_app(settings, migrate=True)
            try:
                _setup(app, "bench/eng/writes")
                for threads in (1, 4):
                    rate = governed_writes(app, "bench/eng/writes", threads, per_thread)
                    rows.append(
                        (
                            name,
                            f"governed writes/s (propose+accept), {threads} thread(s)",
                            f"{rate:,.1f}",
                        )
                    )
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
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer writes and versions")
    args = parser.parse_args()
    rows = run(args.quick)
    widths = [max(len(r[i]) for r in [("backend", "measure", "result"), *rows]) for i in range(3)]
    line = "  ".join("-" * w for w in widths)
    print(
        "  ".join(h.ljust(w) for h, w in zip(("backend", "measure", "result"), widths, strict=True))
    )
    print(line)
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))


if __name__ == "__main__":
    main()
