"""CLI start-up: wall time of whole ``ameide`` processes, as a user waits for them (issue 29's
targets: ``--version`` ≤ 120 ms, ``context`` on the real corpus ≤ 300 ms keyword-only and
≤ 500 ms with semantic recall; median of 7 on a quiet machine).

Run: ``.venv/bin/python -m bench.bench_startup`` (``--runs N``; ``--semantic`` adds the hybrid
``context``, which embeds the corpus first unless ``--embedding-cache`` holds its vectors —
about 12 minutes on 2 cores without). A bare ``python -c pass`` is timed too, as the floor,
and the import of the libraries every read needs (:data:`READ_LIBRARIES`), the floor under a
read whatever the project's own code does.
The corpus rows need ``../shared/corpora`` and are skipped with a message without it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from edge.results import as_json

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
QUESTION = "how does a curator accept a proposal"
READ_LIBRARIES = ("sqlalchemy", "pydantic", "typer", "casbin", "tantivy")
"""What any ``ameide context`` imports before the project's own code (the database layer, the
models, the command line, the authorization rules, the index): a floor under the command."""


def timed(argv: Sequence[str], runs: int, env: dict[str, str] | None = None) -> list[float]:
    """Wall milliseconds of ``runs`` runs of ``argv`` after one untimed warm-up (which fills
    the OS file cache, as any second command a user types finds it)."""
    env = {**os.environ, **(env or {})}
    # as a user's shell runs them: the warm-up writes the bytecode cache, the timed runs use it
    # (with PYTHONDONTWRITEBYTECODE set, every run compiled the project's modules again)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    out: list[float] = []
    for i in range(runs + 1):
        started = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, env=env, check=False)
        elapsed = (time.perf_counter() - started) * 1000
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.decode()[-500:]}")
        if i:
            out.append(elapsed)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed runs of each command")
    parser.add_argument("--semantic", action="store_true", help="time a hybrid context too")
    parser.add_argument("--embedding-cache", type=Path, help="embedding vectors kept between runs")
    args = parser.parse_args(argv)
    ameide = str(BIN / "ameide")
    rows: list[tuple[str, list[float]]] = [
        ("python -c pass (the floor)", timed([sys.executable, "-c", "pass"], args.runs)),
        (
            "import of the libraries a read needs",
            timed([sys.executable, "-c", f"import {', '.join(READ_LIBRARIES)}"], args.runs),
        ),
        ("ameide --version", timed([ameide, "--version"], args.runs)),
        ("ameide --help", timed([ameide, "--help"], args.runs)),
    ]
    rows += _corpus_rows(ameide, args)
    print(f"\n{'command':<46} {'median ms':>10} {'min ms':>8} {'max ms':>8}")
    print("-" * 75)
    for name, times in rows:
        print(f"{name:<46} {statistics.median(times):>10.0f} {min(times):>8.0f} {max(times):>8.0f}")
    return 0


def _corpus_rows(ameide: str, args: argparse.Namespace) -> list[tuple[str, list[float]]]:
    from bench.bench_corpus_read import BUNDLE

    if not BUNDLE.exists():
        print(f"skipped the corpus rows: {BUNDLE} is absent", file=sys.stderr)
        return []
    from bench.eval_corpus import REPO, corpus_home

    rows: list[tuple[str, list[float]]] = []
    cache = args.embedding_cache if args.semantic else None
    with corpus_home(BUNDLE, "bench-startup", cache, background=False) as (src, app, ing, reader):
        semantic, app.reads.semantic = app.reads.semantic, None
        report = as_json(app.service.ingest.ingest_backlog(ing, str(src), REPO))
        app.reads.catch_up_index()
        files = report["counts"]["new"]
        home = str(app.settings.home)
        context = [ameide, "--home", home, "--as", reader.principal_id, "context"]
        context += ["--repo", REPO, "--selector", "head", QUESTION]
        keyword = timed(context, args.runs, {"AMEIDE_SEMANTIC": "off"})
        rows.append((f"ameide context, keyword ({files} files)", keyword))
        if args.semantic and semantic is not None:
            semantic.build()
            hybrid = timed(context, args.runs, {"AMEIDE_SEMANTIC": "on"})
            rows.append((f"ameide context, hybrid ({files} files)", hybrid))
    return rows


if __name__ == "__main__":
    sys.exit(main())
