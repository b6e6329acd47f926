"""Read latency and ingest time on the real backlog corpus (issue #9's performance targets).

Run: ``.venv/bin/python -m bench.bench_corpus_read`` (needs ``../shared/corpora``; skips with a
message without it). It clones the corpus bundle, ingests ``main`` (761 files) into a fresh
SQLite home (timed: the first ingest), then brings the keyword index up to date with it (timed
apart: the ingest only writes the database and its index outbox; a server applies the outbox in
the background, this one-shot run on the first read, here before the reads are timed), then sends
every question of ``eval/backlog-dev.jsonl`` through ``read_context`` in-process as a reader
(``published``, 10 items, explain off) ``--rounds`` times after one warm-up round, and prints a
table: ingest seconds, index catch-up seconds, read p50 / p95 / max ms.

With the semantic extra installed it then builds the embedding index (timed: every chunk
embedded, unless ``--embedding-cache`` holds vectors from an earlier run) and times the same
reads with semantic recall fused in. The ingest and the keyword-only reads run with semantic
recall switched off, so the two columns compare like with like. Every timed hybrid read encodes
its question (the index's kept question vectors are dropped before it, untimed): the rounds
repeat the questions, a new question would not find its vector kept.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from edge.results import as_json

ROOT = Path(__file__).resolve().parents[1]
_CORPORA = [base / "shared" / "corpora" / "ameide-backlog.bundle" for base in ROOT.parents[:2]]
BUNDLE = next((path for path in _CORPORA if path.exists()), _CORPORA[0])
"""``../shared/corpora`` beside the checkout (or beside the folder of a git worktree)."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds over the questions")
    parser.add_argument(
        "--embedding-cache", type=Path, help="keep the embedding index in this file between runs"
    )
    parser.add_argument(
        "--ranking",
        type=json.loads,
        help="score weights instead of the defaults, as JSON (e.g. '{\"anchor\": 0.2}')",
    )
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
    rows: list[tuple[str, str]] = []
    with corpus_home(
        BUNDLE, "bench-corpus", args.embedding_cache, background=False, ranking=args.ranking
    ) as (
        src,
        app,
        ingestor,
        reader,
    ):
        svc = app.service
        semantic, app.reads.semantic = app.reads.semantic, None  # keyword-only first
        started = time.perf_counter()
        report = as_json(svc.ingest.ingest_backlog(ingestor, str(src), REPO))
        ingest_s = time.perf_counter() - started
        files = report["counts"]["new"]
        rows.append((f"first ingest, {files} files (s)", f"{ingest_s:.1f}"))
        started = time.perf_counter()
        app.reads.catch_up_index()  # else the warm-up's first read would build the index
        caught_up_s = time.perf_counter() - started
        rows.append(("keyword index caught up after it (s)", f"{caught_up_s:.1f}"))
        rows += _timed_reads(svc, reader, questions, args.rounds, "keyword")
        rows.append(("peak RSS so far, keyword only (MiB)", f"{_peak_mib():.0f}"))
        if semantic is not None:
            app.reads.semantic = semantic
            started = time.perf_counter()
            semantic.build()
            status = semantic.status()
            rows.append(
                (
                    f"embedding build, {status['indexed_chunks']} chunks (s)",
                    f"{time.perf_counter() - started:.1f}",
                )
            )
            forget = semantic.maintainer.index.forget_queries
            rows += _timed_reads(svc, reader, questions, args.rounds, "hybrid", forget)
            rows.append(("peak RSS, with semantic recall (MiB)", f"{_peak_mib():.0f}"))
        else:
            rows.append(("semantic extra", "not installed"))
    print(f"\n{'measure':<40} {'value':>14}")
    print("-" * 55)
    for name, value in rows:
        print(f"{name:<40} {value:>14}")
    return 0


def _peak_mib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _timed_reads(
    svc: Any,
    reader: Any,
    questions: list[str],
    rounds: int,
    label: str,
    forget: Callable[[], None] | None = None,
) -> list[tuple[str, str]]:
    """p50 / p95 / max of ``read_context`` over every question, ``rounds`` times after a
    warm-up round (``forget``: called before each read, untimed — the semantic index drops
    its kept question vectors, so repeating the questions does not skip their encoding)."""
    from bench.eval_corpus import REPO

    tenant, org, repo = REPO.split("/")
    scope = {"tenant_id": tenant, "organization_id": org, "repository_id": repo}

    def read(q: str) -> float:
        if forget is not None:  # every timed read encodes its question, as a new one would
            forget()
        t0 = time.perf_counter()
        svc.reading.read_context(reader, {"scope": scope, "query": q, "budget": {"max_items": 10}})
        return (time.perf_counter() - t0) * 1000

    for q in questions:  # warm-up
        read(q)
    times = sorted(read(q) for _ in range(rounds) for q in questions)
    p50 = statistics.median(times)
    p95 = times[int(0.95 * (len(times) - 1))]
    return [
        (f"read_context {label} p50 (ms)", f"{p50:.1f}"),
        (f"read_context {label} p95 (ms)", f"{p95:.1f}"),
        (f"read_context {label} max (ms)", f"{times[-1]:.1f}"),
        (f"reads timed ({label})", str(len(times))),
    ]


if __name__ == "__main__":
    raise SystemExit(main())
