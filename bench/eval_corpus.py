"""Retrieval quality on the real backlog corpus: per-type tables for every eval pipeline.

Run: ``make eval-corpus`` (or ``.venv/bin/python -m bench.eval_corpus``). It needs the shared
corpus (``../shared/corpora/ameide-backlog.bundle``) and skips with a message when it is absent.
It clones the bundle, ingests it into a scratch home (a temporary directory) — first at every
commit a time-travel question names (``as_of_ref``), noting the instant after each of those
runs, then at ``main`` — and runs the dev set ``eval/backlog-dev.jsonl`` through every pipeline
``MemoryService.evaluation.eval_pipelines()`` lists (``keyword``, ``full``, ``full_expanded``, and
any pipeline an installed extra adds). Grades are the dev set's plus the pooled judgements of
``eval/pool.jsonl`` (documents some pipeline put in its top 10 that the dev set did not grade).

Per question type it prints nDCG@10, MRR and R@10 and, for status ("what is current")
questions, how many show a superseded page above the current one. Options: ``--json``,
``--types status,why``, ``--list-unjudged`` (top-10 documents without a judgement, as JSONL to
judge into the pool), ``--check`` (validate the dev set and the pool; with the corpus present,
fail when any pipeline's top 10 holds an unjudged document). See eval/README.md.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from edge.results import as_json

ROOT = Path(__file__).resolve().parents[1]
DEV_SET = ROOT / "eval" / "backlog-dev.jsonl"
POOL = ROOT / "eval" / "pool.jsonl"
BUNDLE = ROOT.parent / "shared" / "corpora" / "ameide-backlog.bundle"
K = 10
TYPES = ("howto", "whatis", "why", "status", "multihop", "vocab", "time_travel")
REPO = "eval/backlog/corpus"
METRICS = (("ndcg", "nDCG@10"), ("mrr", "MRR"), ("recall", "R@10"))


# -- the dataset: dev set + pool --------------------------------------------------------------
@dataclass(slots=True)
class Question:
    """One dev-set line with its pooled judgements merged in (the dev set's grade wins)."""

    query: str
    type: str
    graded: dict[str, int]
    """The dev set's own grades (for a status question, its 0s are the superseded pages)."""
    pooled: dict[str, int] = field(default_factory=dict)
    as_of_ref: str | None = None
    row: dict[str, Any] = field(default_factory=dict)

    @property
    def relevant(self) -> dict[str, int]:
        return {**self.pooled, **self.graded}

    def line(self, instants: Mapping[str, datetime]) -> str:
        """The golden-set line the service evaluates (``as_of`` resolved from its commit)."""
        out: dict[str, Any] = {"query": self.query, "relevant": self.relevant}
        if "same_answer" in self.row:
            out["same_answer"] = self.row["same_answer"]
        if self.as_of_ref is not None:
            out["as_of"] = instants[self.as_of_ref].isoformat()
        return json.dumps(out, ensure_ascii=False)


def load(dev_lines: Iterable[str], pool_lines: Iterable[str]) -> tuple[list[Question], list[str]]:
    """The questions and every problem found (bad lines, unknown types, pool conflicts)."""
    problems: list[str] = []
    questions: list[Question] = []
    by_query: dict[str, Question] = {}
    for number, raw in enumerate(dev_lines, start=1):
        if not raw.strip():
            continue
        row = json.loads(raw)
        kind = row.get("type")
        if kind not in TYPES:
            problems.append(f"dev set line {number}: type {kind!r} is not one of {TYPES}")
        relevant = row.get("relevant")
        if not isinstance(relevant, dict) or not relevant:
            problems.append(f"dev set line {number}: needs graded 'relevant' keys")
            relevant = {}
        for key, grade in relevant.items():
            if grade not in (0, 1, 2):
                problems.append(f"dev set line {number}: {key} has grade {grade!r}, not 0/1/2")
        if kind == "status" and not any(g == 0 for g in relevant.values()):
            problems.append(f"dev set line {number}: a status question names no older page (0)")
        if row["query"] in by_query:
            problems.append(f"dev set line {number}: the question is already on another line")
        q = Question(row["query"], str(kind), dict(relevant), {}, row.get("as_of_ref"), row)
        questions.append(q)
        by_query[q.query] = q
    for number, raw in enumerate(pool_lines, start=1):
        if not raw.strip():
            continue
        row = json.loads(raw)
        pooled_q = by_query.get(row.get("query", ""))
        key, grade = row.get("key"), row.get("grade")
        if pooled_q is None:
            problems.append(f"pool line {number}: no dev-set question {row.get('query')!r}")
        elif grade not in (0, 1, 2) or not isinstance(key, str):
            problems.append(f"pool line {number}: needs a 'key' and a grade 0/1/2")
        elif key in pooled_q.graded and pooled_q.graded[key] != grade:
            problems.append(f"pool line {number}: {key} conflicts with the dev set's grade")
        elif key in pooled_q.pooled and pooled_q.pooled[key] != grade:
            problems.append(f"pool line {number}: {key} is judged twice with different grades")
        else:
            pooled_q.pooled[key] = grade
    return questions, problems


# -- metrics per type -------------------------------------------------------------------------
def superseded_above_current(keys: Sequence[str], q: Question, k: int = K) -> bool:
    """A status question's top ``k`` shows one of its superseded pages (graded 0 by the dev
    set) before any current page (graded 2), or shows one and no current page at all."""
    older = {key for key, g in q.graded.items() if g == 0}
    current = {key for key, g in q.graded.items() if g == 2}
    for key in keys[:k]:
        if key in current:
            return False
        if key in older:
            return True
    return False


def type_tables(
    questions: Sequence[Question], per_query: Sequence[Mapping[str, Any]], pipelines: Sequence[str]
) -> dict[str, dict[str, dict[str, float]]]:
    """``{type: {pipeline: {ndcg, mrr, recall, n[, superseded_above_current]}}}`` with an
    ``all`` row over every question; ``per_query`` is the service's, in question order."""
    groups: dict[str, list[int]] = {}
    for i, q in enumerate(questions):
        groups.setdefault(q.type, []).append(i)
    order = [t for t in TYPES if t in groups] + sorted(set(groups) - set(TYPES))
    groups_all = {**{t: groups[t] for t in order}, "all": list(range(len(questions)))}
    tables: dict[str, dict[str, dict[str, float]]] = {}
    for kind, idx in groups_all.items():
        table: dict[str, dict[str, float]] = {}
        for name in pipelines:
            row = {
                metric: round(sum(per_query[i]["metrics"][name][metric] for i in idx) / len(idx), 3)
                for metric, _ in METRICS
            }
            row["n"] = len(idx)
            status = [i for i in idx if questions[i].type == "status"]
            if status:
                row["superseded_above_current"] = sum(
                    superseded_above_current(per_query[i][name], questions[i]) for i in status
                )
                row["status_questions"] = len(status)
            table[name] = row
        tables[kind] = table
    return tables


def unjudged(
    questions: Sequence[Question], per_query: Sequence[Mapping[str, Any]], pipelines: Sequence[str]
) -> list[dict[str, Any]]:
    """For each question, the top-``K`` documents of any pipeline that have no judgement."""
    out = []
    for q, result in zip(questions, per_query, strict=True):
        found: dict[str, dict[str, Any]] = {}
        for name in pipelines:
            for rank, key in enumerate(result[name][:K], start=1):
                if key in q.relevant:
                    continue
                entry = found.setdefault(key, {"key": key, "best_rank": rank, "pipelines": []})
                entry["best_rank"] = min(entry["best_rank"], rank)
                entry["pipelines"].append(name)
        if found:
            out.append({"query": q.query, "type": q.type, "unjudged": list(found.values())})
    return out


def format_tables(tables: Mapping[str, Mapping[str, Mapping[str, float]]]) -> str:
    """Plain-text tables, one per question type."""
    lines = []
    for kind, table in tables.items():
        n = next(iter(table.values()))["n"] if table else 0
        lines.append(f"{kind} ({int(n)} questions)")
        status = any("superseded_above_current" in row for row in table.values())
        head = f"  {'pipeline':<16}" + "".join(f"{label:>9}" for _, label in METRICS)
        lines.append(head + ("   superseded above current" if status else ""))
        for name, row in table.items():
            text = f"  {name:<16}" + "".join(f"{row[m]:>9.3f}" for m, _ in METRICS)
            if status:
                above, total = int(row["superseded_above_current"]), int(row["status_questions"])
                text += f"   {above} of {total}"
            lines.append(text)
        lines.append("")
    return "\n".join(lines)


# -- the run ----------------------------------------------------------------------------------
def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


@contextmanager
def corpus_home(
    bundle: Path,
    prefix: str,
    embedding_cache: Path | None = None,
    *,
    background: bool = True,
    ranking: Mapping[str, float] | None = None,
) -> Iterator[tuple[Path, Any, Any, Any]]:
    """A scratch home with the corpus cloned beside it, one repository (``REPO``), an
    ingestor and a reader on it: yields (clone, app, ingestor, reader); removed afterwards.

    ``embedding_cache``: a file kept between runs holding the embedding index (with the
    semantic extra), so texts embedded once are not embedded again (vectors are cached by the
    hash of their text): its cached vectors are imported first, and the run's are added to it
    afterwards. ``background=False``:
    vectors are only built when asked (``semantic.build()``), never during an ingest.
    ``ranking``: score weights for the home's ``config.json`` (the defaults otherwise)."""
    from runtime import build_app
    from service.authz import Caller
    from service.settings import Settings

    admin = Caller("user:eval-admin", purpose=prefix)
    ingestor = Caller("service:eval-ingest", purpose=prefix)
    reader = Caller("user:eval-reader", purpose=prefix)
    with tempfile.TemporaryDirectory(prefix=f"ameide-{prefix}-") as tmp:
        src = Path(tmp) / "backlog"
        subprocess.run(
            ["git", "clone", "-q", "-b", "main", str(bundle), str(src)],
            check=True,
            capture_output=True,
        )
        settings = Settings(home=Path(tmp) / "home")
        if ranking:
            settings.home.mkdir(parents=True, exist_ok=True)
            (settings.home / "config.json").write_text(json.dumps({"ranking": dict(ranking)}))
        vectors = settings.vectors_dir / "vectors.sqlite"
        app = build_app(settings, migrate=True, background=background)
        semantic = app.semantic
        if semantic is not None and embedding_cache is not None and embedding_cache.is_file():
            semantic.maintainer.index.import_cache(embedding_cache)
        try:
            svc = app.service
            svc.admin.bootstrap_admin(admin.principal_id)
            svc.admin.create_repository(admin, REPO)
            svc.admin.grant(admin, ingestor.principal_id, "ingestor", REPO)
            svc.admin.grant(admin, reader.principal_id, "reader", REPO)
            yield src, app, ingestor, reader
        finally:
            app.close()
            if embedding_cache is not None and vectors.is_file():
                _keep_vectors(vectors, embedding_cache)


def _keep_vectors(vectors: Path, cache: Path) -> None:
    """Add the run's cached vectors to the file kept between runs (a run that embedded only
    part of the corpus never drops the others)."""
    if not cache.is_file():
        cache.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(vectors, cache)
        return
    db = sqlite3.connect(cache)
    try:
        db.execute("ATTACH DATABASE ? AS run", (str(vectors),))
        db.execute("INSERT OR IGNORE INTO cache SELECT * FROM run.cache")
        db.commit()
        db.execute("DETACH DATABASE run")
    finally:
        db.close()


def run_corpus(
    bundle: Path,
    questions: Sequence[Question],
    refs: Iterable[str] = (),
    embedding_cache: Path | None = None,
    ranking: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """Ingest the corpus into a scratch home and evaluate every question (see the module).

    The corpus is ingested at ``refs`` and at every question's ``as_of_ref`` first (oldest
    first), then at ``main``: pass the refs of the whole dev set so that evaluating a subset
    (``--types``) reads the very same repository history and scores the same."""
    with corpus_home(bundle, "eval-corpus", embedding_cache, background=False, ranking=ranking) as (
        src,
        app,
        ingestor,
        reader,
    ):
        svc = app.service
        older = sorted(
            {*refs, *(q.as_of_ref for q in questions if q.as_of_ref)},
            key=lambda ref: int(_git(src, "log", "-1", "--format=%ct", ref)),
        )
        instants: dict[str, datetime] = {}
        ingests = []
        for ref in [*older, "main"]:
            started = time.perf_counter()
            report = as_json(svc.ingest.ingest_backlog(ingestor, str(src), REPO, ref=ref))
            ingests.append(
                {
                    "ref": ref,
                    "seconds": round(time.perf_counter() - started, 1),
                    "counts": report["counts"],
                }
            )
            print(f"ingested {ref} in {ingests[-1]['seconds']} s", file=sys.stderr)
            instants[ref] = app.clock.now()
            time.sleep(0.01)  # the next run's writes are strictly later than this instant
        if app.semantic is not None:
            started = time.perf_counter()
            app.semantic.build(_embedding_progress)
            embedded = time.perf_counter() - started
            print(f"embeddings caught up in {embedded:.1f} s", file=sys.stderr)
        started = time.perf_counter()
        lines = [q.line(instants) for q in questions]
        result = as_json(svc.evaluation.evaluate(reader, REPO, lines, k=K, include_per_query=True))
        print(
            f"evaluated {len(lines)} questions in {time.perf_counter() - started:.1f} s",
            file=sys.stderr,
        )
    result["ingests"] = ingests
    result["instants"] = {ref: at.isoformat() for ref, at in instants.items()}
    return result


def _embedding_progress(done: int, total: int) -> None:
    print(f"\rembedding {done}/{total} texts", end="" if done < total else "\n", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.eval_corpus", description=__doc__.split("\n")[0])
    parser.add_argument("--bundle", type=Path, default=BUNDLE, help="the corpus git bundle")
    parser.add_argument("--dataset", type=Path, default=DEV_SET)
    parser.add_argument("--pool", type=Path, default=POOL)
    parser.add_argument("--types", help="comma-separated question types to evaluate")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument(
        "--list-unjudged", action="store_true", help="print top-10 documents with no judgement"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="validate dev set and pool; fail if a pipeline's top 10 holds an unjudged document",
    )
    parser.add_argument(
        "--embedding-cache",
        type=Path,
        help="with the semantic extra: keep the embedding index in this file between runs",
    )
    parser.add_argument(
        "--ranking",
        type=json.loads,
        help="score weights to evaluate instead of the defaults, as JSON: '{\"anchor\": 0}'",
    )
    args = parser.parse_args(argv)
    pool_lines = args.pool.read_text("utf-8").splitlines() if args.pool.exists() else []
    questions, problems = load(args.dataset.read_text("utf-8").splitlines(), pool_lines)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    refs = sorted({q.as_of_ref for q in questions if q.as_of_ref})
    if args.types:
        wanted = {t.strip() for t in args.types.split(",") if t.strip()}
        unknown = wanted - set(TYPES)
        if unknown:
            print(f"unknown types {sorted(unknown)}; known: {', '.join(TYPES)}", file=sys.stderr)
            return 2
        questions = [q for q in questions if q.type in wanted]
    if args.check:
        print(f"dev set and pool are valid: {len(questions)} questions", file=sys.stderr)
    if not args.bundle.exists():
        print(f"skipped: the shared corpus {args.bundle} is absent", file=sys.stderr)
        return 0
    result = run_corpus(args.bundle, questions, refs, args.embedding_cache, args.ranking)
    pipelines = list(result["pipelines"])
    tables = type_tables(questions, result["per_query"], pipelines)
    missing = unjudged(questions, result["per_query"], pipelines)
    if args.list_unjudged:
        for row in missing:
            print(json.dumps(row, ensure_ascii=False))
    elif args.json:
        out = {
            "questions": len(questions),
            "k": K,
            "pipelines": pipelines,
            "ingests": result["ingests"],
            "types": tables,
            "unjudged_documents": sum(len(r["unjudged"]) for r in missing),
            "per_query": [
                {"query": q.query, "type": q.type, **{n: r[n] for n in pipelines}}
                for q, r in zip(questions, result["per_query"], strict=True)
            ],
        }
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        print(format_tables(tables))
        count = sum(len(r["unjudged"]) for r in missing)
        print(f"unjudged documents in some pipeline's top {K}: {count}")
    if args.check and missing:
        print("check failed: judge the unjudged documents into eval/pool.jsonl", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
