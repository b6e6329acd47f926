"""Read latency and ingest time on the real backlog corpus (issue #9's performance targets).

Run: ``.venv/bin/python -m bench.bench_corpus_read`` (needs ``../shared/corpora``; skips with a
message without it). It clones the corpus bundle, ingests ``main`` (761 files) into a fresh
SQLite home (timed: the first ingest), then sends every question of ``eval/backlog-dev.jsonl``
through ``read_context`` in-process as a reader (``published``, 10 items, explain off) ``--rounds``
times after one warm-up round, and prints a table: ingest seconds, read p50 / p95 / max ms.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUNDLE = ROOT.parent / "shared" / "corpora" / "ameide-backlog.bundle"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds over the questions")
    args = parser.parse_args(argv)
    if not BUNDLE.exists():
        print(f"skipped: the shared corpus {BUNDLE} is absent", file=sys.stderr)
        return 0
    from bench.eval_corpus import REPO, corpus_home

    questions = [
        json.loads(line)["query"]
        for line in (ROOT / "eval" / "backlog-dev.jsonl").read_text("utf-8").splitlines()
        if line.strip()
    ]
    with corpus_home(BUNDLE, "bench-corpus") as (src, app, ingestor, reader):
        svc = app.service
        started = time.perf_counter()
        report = svc.ingest_backlog(ingestor, str(src), REPO)
        ingest_s = time.perf_counter() - started
        tenant, org, repo = REPO.split("/")
        scope = {"tenant_id": tenant, "organization_id": org, "repository_id": repo}

        def read(q: str) -> float:
            t0 = time.perf_counter()
            svc.read_context(reader, {"scope": scope, "query": q, "budget": {"max_items": 10}})
            return (time.perf_counter() - t0) * 1000

        for q in questions:  # warm-up
            read(q)
        times = sorted(read(q) for _ in range(args.rounds) for q in questions)
    p50 = statistics.median(times)
    p95 = times[int(0.95 * (len(times) - 1))]
    files = report["counts"]["new"]
    print(f"\n{'measure':<34} {'value':>10}")
    print("-" * 45)
    print(f"{'first ingest, ' + str(files) + ' files (s)':<34} {ingest_s:>10.1f}")
    print(f"{'read_context p50 (ms)':<34} {p50:>10.1f}")
    print(f"{'read_context p95 (ms)':<34} {p95:>10.1f}")
    print(f"{'read_context max (ms)':<34} {times[-1]:>10.1f}")
    print(f"{'reads timed':<34} {len(times):>10}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
