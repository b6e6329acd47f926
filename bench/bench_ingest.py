"""Ingest benchmark: first ingest and no-change re-ingest of a markdown backlog, files/s and MB/s.

Run: ``.venv/bin/python -m bench.bench_ingest``. Prints a table.

The backlog is the real corpus (``../shared/corpora/ameide-backlog.bundle`` beside the checkout,
761 files) when present, else a generated 1,000-file repository (``--generated`` forces it).
Each backend gets a fresh database: SQLite in a temporary home, PostgreSQL as a new database
at AMEIDE_BENCH_POSTGRES_URL (default 127.0.0.1:5432, user postgres), skipped with a note when
unreachable. Whatever post-commit work ``runtime.build_app`` wires (the keyword index) is part
of the measured time; the time spent in it is also shown on its own ("of which index s"), with
the rate the ingest path reaches without it. Targets: first ingest >= 50 files/s, no-change
re-run <= 2 s.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.backends import backends
from bench.tables import columns
from edge.results import as_json
from runtime import App, build_app
from service.authz import Caller

BUNDLE = Path(__file__).resolve().parents[1] / ".." / "shared" / "corpora" / "ameide-backlog.bundle"
ADMIN = Caller("user:admin", purpose="bench")
INGESTOR = Caller("service:bench-ingest", purpose="bench")
REPO = "bench/eng/backlog"
TARGET_FILES_PER_S = 50.0
TARGET_RERUN_S = 2.0
_GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}
WORDS = [
    "deploy", "cluster", "tenant", "policy", "review", "backlog", "index", "query", "agent",
    "schema", "migration", "token", "release", "rollout", "canary", "latency", "budget",
    "incident", "owner", "contract", "event", "stream", "proposal",
]  # fmt: skip


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=root, env={**os.environ, **_GIT_ENV}, capture_output=True, check=True
    )
    return done.stdout.decode().strip()


def corpus_from_bundle(target: Path) -> Path:
    """A clone of the real backlog."""
    subprocess.run(
        ["git", "clone", "-q", "-b", "main", str(BUNDLE), str(target)],
        check=True,
        capture_output=True,
    )
    return target


def generated_corpus(target: Path, files: int, seed: int = 7) -> Path:
    """A backlog of ``files`` markdown files (~6 KB each): front matter on a third, headings,
    lists and links to other files, in 10 folders."""
    rng = random.Random(seed)
    target.mkdir(parents=True)
    _git(target, "init", "-q", "-b", "main")
    paths = [f"backlog/{i // 100:02d}/{i:04d}-item.md" for i in range(files)]
    for i, path in enumerate(paths):
        parts = []
        if i % 3 == 0:
            status = rng.choice(["active", "draft", "superseded"])
            parts.append(f"---\ntitle: Item {i}\nstatus: {status}\nowners: [team-{i % 7}]\n---\n")
        parts.append(f"# Item {i}: {' '.join(rng.choices(WORDS, k=4))}\n")
        for section in range(6):
            parts.append(f"\n## Section {section}\n\n")
            parts.append(" ".join(rng.choices(WORDS, k=120)) + ".\n")
            parts.append("".join(f"- {' '.join(rng.choices(WORDS, k=8))}\n" for _ in range(4)))
        for other in rng.sample(range(files), 3):
            parts.append(f"\nSee [item {other}](/{paths[other]}).\n")
        file = target / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text("".join(parts), encoding="utf-8")
    _git(target, "add", "-A")
    _git(target, "commit", "-q", "-m", "generated backlog")
    return target


def measure(app: App, source: Path) -> list[dict[str, Any]]:
    """The first ingest and a no-change re-run, each as a result row."""
    svc = app.service
    svc.admin.bootstrap_admin(ADMIN.principal_id)
    svc.admin.create_repository(ADMIN, REPO)
    svc.admin.grant(ADMIN, INGESTOR.principal_id, "ingestor", REPO)
    spent = _time_the_index(app)
    rows = []
    for run in ("first ingest", "no-change re-run"):
        spent[0] = 0.0
        started = time.perf_counter()
        report = as_json(svc.ingest.ingest_backlog(INGESTOR, str(source), REPO))
        seconds = time.perf_counter() - started
        rows.append({"run": run, "seconds": seconds, "report": report, "index_s": spent[0]})
    return rows


def _time_the_index(app: App) -> list[float]:
    """Accumulate the time the post-commit index upkeep takes (when the app wires one)."""
    spent = [0.0]
    indexer = getattr(app.service, "indexer", None)
    catch_up = getattr(indexer, "catch_up", None)
    if catch_up is None:
        return spent

    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return catch_up(*args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - started

    indexer.catch_up = timed  # type: ignore[union-attr]
    return spent


def _row(backend: str, corpus: str, result: dict[str, Any], files: int, mb: float) -> list[str]:
    seconds, report, index_s = result["seconds"], result["report"], result["index_s"]
    timings = report.get("timings", {})
    phases = "/".join(f"{timings.get(k, 0):.1f}" for k in ("plan_s", "write_s", "link_s"))
    if result["run"] == "first ingest":
        verdict = "ok" if files / seconds >= TARGET_FILES_PER_S else "MISSED"
        target = f">= {TARGET_FILES_PER_S:.0f} files/s: {verdict}"
        rates = (f"{files / seconds:,.1f}", f"{mb / seconds:,.2f}")
        without = f"{files / max(seconds - index_s, 1e-9):,.1f}"
    else:
        verdict = "ok" if seconds <= TARGET_RERUN_S else "MISSED"
        target = f"<= {TARGET_RERUN_S:.0f} s: {verdict}"
        rates, without = ("-", "-"), "-"
    written = report["versions_written"]
    return [backend, corpus, result["run"], str(files), f"{mb:.1f}", f"{seconds:.2f}", *rates,
            str(written), phases, f"{index_s:.1f}", without, target]  # fmt: skip


HEADERS = [
    "backend", "corpus", "run", "files", "MB", "seconds", "files/s", "MB/s", "versions",
    "plan/write/link s", "of which index s", "files/s w/o index", "target",
]  # fmt: skip


def run(generated: bool, files: int) -> tuple[list[list[str]], list[str]]:
    """Measure every backend; returns table rows and notes."""
    notes: list[str] = []
    rows: list[list[str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        if not generated and BUNDLE.exists():
            source, corpus = corpus_from_bundle(Path(tmp) / "corpus"), "ameide-backlog"
        else:
            if not generated:
                notes.append(f"corpus {BUNDLE.resolve()} absent: generated {files} files instead")
            source, corpus = generated_corpus(Path(tmp) / "corpus", files), f"generated-{files}"
        found, skipped = backends(Path(tmp))
        notes.extend(skipped)
        for name, settings, drop in found:
            app = build_app(settings, migrate=True)
            try:
                first, again = measure(app, source)
                stats = first["report"]
                count = stats["files"]
                mb = stats["bytes"] / 1_000_000
                rows.append(_row(name, corpus, first, count, mb))
                rows.append(_row(name, corpus, again, count, mb))
                if stats["counts"]["skipped"]:
                    notes.append(f"{name}: {stats['counts']['skipped']} files skipped")
            finally:
                app.close()
                if drop:
                    drop()
    return rows, notes


def main() -> None:
    """Parse arguments, run, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--generated", action="store_true", help="use a generated backlog, not the corpus"
    )
    parser.add_argument("--files", type=int, default=1000, help="size of the generated backlog")
    args = parser.parse_args()
    rows, notes = run(args.generated, args.files)
    print(columns(HEADERS, rows))
    for note in notes:
        print(f"note: {note}")


if __name__ == "__main__":
    main()
