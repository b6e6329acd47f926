"""Scale benchmark (issue 10): ``read_context`` on a million chunks, for each keyword index engine.

Run: ``.venv/bin/python -m bench.bench_scale`` (``--chunks 100000`` for the 100k figures,
``--engines tantivy`` for one engine). It seeds one SQLite database with the synthetic corpus of
``bench.corpus`` **in bulk** (SQLAlchemy Core ``executemany`` in batches, no outbox rows: the
rebuild indexes everything) — the same shape as ``bench.bench_read``: five repositories, a
relationship chain per repository, a published baseline, then a second version of every tenth
canonical document. Then, per engine, in a child process of its own (so its peak RSS is its
own): ``ameide index rebuild``'s code path (build rate of the whole rebuild — reading the
versions, chunking, the index, the chunk rows — and of the engine alone, fed as a stream, with
the CPU seconds of every thread and the peak RSS after each), 100 ten-word questions through
``read_context`` as a reader of one repository (published, ``as_of``, 2-hop expansion: p50 /
p95), one committed write until indexed, the index's size on disk and the child's peak RSS.
Each engine's figures are printed as a JSON line as it finishes, then all of them as a table.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.bench_read import ADMIN, AGENT, LEVELS, QUESTIONS, SEED, _incremental, timings
from bench.corpus import REPOSITORIES, generate_documents, generate_questions
from bench.tables import columns
from domain.model import Element, Provenance, Relationship, RelationshipKind
from domain.values import SourceKind
from projection.chunks import split_into_chunks
from projection.keyword_index import IndexFilter
from runtime import build_app
from runtime.engines import engine_directory
from service.authz import Caller
from service.indexing.upkeep import chunks_of
from service.reading.views import Memo
from service.settings import Settings
from storage import schema as t
from storage.rows import element_row, relationship_row, version_row

BATCH = 5_000


def seed(home: Path, total_chunks: int) -> dict[str, Any]:
    """Bulk-write documents until ``total_chunks`` chunks; the figures of the seeding."""
    started = time.perf_counter()
    # no background upkeep: the bulk inserts hold the write lock for minutes, and its pruning
    # would give up waiting (and log it) while they run
    app = build_app(Settings(home=home), migrate=True, background=False)
    app.indexer.catch_up = lambda *args, **kwargs: 0  # type: ignore[method-assign,union-attr]
    svc = app.service
    svc.admin.bootstrap_admin(ADMIN.principal_id)
    for repo in REPOSITORIES:
        svc.admin.create_repository(ADMIN, repo)
        svc.admin.grant(ADMIN, AGENT.principal_id, "reader", repo, "internal")
        svc.admin.grant(ADMIN, "user:bench-publisher", "publisher", repo, "restricted")
    prov = Provenance("user", "user:bench")
    chunks = documents = canonical_count = 0
    canonical: list[tuple[Element, Any]] = []
    elements: list[dict[str, Any]] = []
    versions: list[dict[str, Any]] = []
    relationships: list[dict[str, Any]] = []
    last: dict[str, str] = {}
    at = app.clock.now()
    with app.engine.begin() as conn:
        for doc in generate_documents(SEED):
            el = Element.new(
                doc.repository_key,
                kind="DOCUMENT",
                type_key=doc.type_key,
                source_kind=SourceKind(doc.source_kind),
                classification=LEVELS[doc.classification_rank],
                at=at,
                by="user:bench",
            )
            v = el.next_version(title=doc.title, body=doc.body, metadata={}, at=at, provenance=prov)
            elements.append(element_row(el, head=v))
            versions.append(version_row(v))
            if el.source_kind is SourceKind.CANONICAL:
                if canonical_count % 10 == 0:  # every tenth gets a second version below
                    canonical.append((el, v))
                canonical_count += 1
            if doc.repository_key in last:
                relationships.append(_link(doc.repository_key, last[doc.repository_key], el, at))
            last[doc.repository_key] = el.element_id
            chunks += len(split_into_chunks(doc.body))
            documents += 1
            if len(versions) >= BATCH or chunks >= total_chunks:
                _flush(conn, elements, versions, relationships)
                at = app.clock.now()
            if chunks >= total_chunks:
                break
    seeded = time.perf_counter() - started
    publisher = Caller("user:bench-publisher", purpose="bench")
    for repo in REPOSITORIES:
        svc.publishing.promote(
            publisher, svc.publishing.create_baseline(publisher, repo).baseline_id, repo, "bench"
        )
    mid = app.clock.now()
    at = app.clock.now()
    heads = []
    with app.engine.begin() as conn:
        for el, previous in canonical:
            el.head_version_id, el.head_seq = previous.version_id, previous.seq
            v = el.next_version(
                title=previous.title,
                body=previous.body + "\nrevised\n",
                metadata={},
                at=at,
                provenance=prov,
            )
            versions.append(version_row(v))
            heads.append({"e": el.element_id, "h": v.version_id, "s": v.seq})
            if len(versions) >= BATCH:
                _flush(conn, [], versions, [])
        _flush(conn, [], versions, [])
        update = (
            t.elements.update()
            .where(t.elements.c.element_id == _bind("e"))
            .values(head_version_id=_bind("h"), head_seq=_bind("s"))
        )
        for start in range(0, len(heads), BATCH):
            conn.execute(update, heads[start : start + BATCH])
    app.close()
    return {
        "chunks_seeded": chunks,
        "documents": documents,
        "second_versions": len(heads),
        "seed_seconds": round(time.perf_counter() - started, 1),
        "bulk_insert_seconds": round(seeded, 1),
        "mid": mid.isoformat(),
    }


def _bind(name: str) -> Any:
    import sqlalchemy as sa

    return sa.bindparam(name)


def _link(repo: str, source: str, el: Element, at: datetime) -> dict[str, Any]:
    r = Relationship.new(
        repo, RelationshipKind.REFERENCE, "ameide:cites", source, el.element_id, {}, at, "user:b"
    )
    return relationship_row(r)


def _flush(conn: Any, elements: list[Any], versions: list[Any], links: list[Any]) -> None:
    for table, rows in (
        (t.elements, elements),
        (t.element_versions, versions),
        (t.relationships, links),
    ):
        if rows:
            conn.execute(table.insert(), rows)
            rows.clear()


def measure(home: Path, engine: str, mid: str, *, full_rebuild: bool = True) -> dict[str, Any]:
    """One engine on the seeded home (run in a child process: its peak RSS is this engine's)."""
    app = build_app(Settings(home=home, index_engine=engine))
    assert app.indexer is not None
    index = app.indexer.index
    # The engine alone, fed as a stream (what its own memory needs): the versions as the
    # database streams them, chunked, into the index's rebuild.
    started, cpu = time.perf_counter(), _cpu()
    with app.uow(readonly=True) as uow:
        top = uow.store.max_outbox_id()
        stream = (
            chunk
            for v in uow.store.all_indexable_versions()
            if not v.erased
            for chunk in chunks_of(v)
        )
        index.rebuild(stream, position=top)
    streamed, streamed_cpu = time.perf_counter() - started, _cpu() - cpu
    rss_engine_build = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    built = {"chunks": index.doc_count(), "versions": index.version_count()}
    whole = whole_cpu = rss_after_build = None
    if full_rebuild:
        # `ameide index rebuild`'s code path (IndexMaintainer.rebuild: it keeps every chunk
        # row's fields in memory, and writes the chunk rows to the database too).
        started, cpu = time.perf_counter(), _cpu()
        built = app.indexer.rebuild()
        whole, whole_cpu = time.perf_counter() - started, _cpu() - cpu
        rss_after_build = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    questions = generate_questions(SEED, QUESTIONS)
    tenant, org, repo = REPOSITORIES[0].split("/")
    scope = {"tenant_id": tenant, "organization_id": org, "repository_id": repo}

    def read(q: str, **extra: Any) -> object:
        return app.service.reading.read_context(AGENT, {"scope": scope, "query": q, **extra})

    raw = IndexFilter({REPOSITORIES[0]: 1})
    runs: dict[str, Callable[[str], object]] = {
        "raw_search": lambda q: app.reads.index.search(q, raw, limit=10, per_version=1),
        "published": read,
        "as_of": lambda q: read(q, as_of=mid),
        "two_hop": lambda q: read(q, expand={"hops": 2}),
    }
    found: dict[str, Any] = {
        "engine": engine,
        "chunks": built["chunks"],
        "versions": built["versions"],
        "engine_build_chunks_per_s": round(built["chunks"] / streamed),
        "peak_rss_engine_build_mib": round(rss_engine_build),
        "engine_build_seconds": round(streamed, 1),
        "engine_build_cpu_seconds": round(streamed_cpu, 1),
        "rebuild_chunks_per_s": round(built["chunks"] / whole) if whole else None,
        "rebuild_seconds": round(whole, 1) if whole else None,
        "rebuild_cpu_seconds": round(whole_cpu, 1) if whole_cpu else None,
        "load_average": round(os.getloadavg()[0], 1),
        "peak_rss_after_rebuild_mib": round(rss_after_build) if rss_after_build else None,
    }
    # The first read of a past instant resolves its selection; later reads of that instant
    # reuse it (the selection cache), and `timings` warms up with one read first.
    started = time.perf_counter()
    read(questions[-1], as_of=mid)
    found["as_of_first_read_ms"] = round((time.perf_counter() - started) * 1000, 1)
    for name, action in runs.items():
        # each kind of read starts without the text kept per version (chunks, shingles) from
        # the one before: the same 100 questions would otherwise find their candidates' text
        # prepared by the earlier kind and look faster than a new question does
        app.reads.memo = Memo()
        found[name] = timings(action, questions)
    found["one_write_until_indexed"] = _incremental(app)
    directory = engine_directory(app.settings, engine)
    found["index_mib_on_disk"] = round(_size(directory, skip="tantivy") / 2**20, 1)
    found["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    app.close()
    return found


def _cpu() -> float:
    """CPU seconds of this process so far, every thread's (tantivy indexes on its own): on a
    shared machine a steadier figure than the wall time."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _size(directory: Path, *, skip: str) -> int:
    total = 0
    for root, dirs, files in os.walk(directory):
        if Path(root) == directory and skip in dirs and directory.name != skip:
            dirs.remove(skip)  # Whoosh's directory holds tantivy's
        total += sum(os.path.getsize(Path(root) / name) for name in files)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=1_000_000)
    parser.add_argument("--engines", nargs="*", default=["tantivy", "whoosh"])
    parser.add_argument("--home", type=Path, help="reuse (or keep) the seeded home here")
    parser.add_argument(
        "--engine-build-only",
        action="store_true",
        help="skip IndexMaintainer.rebuild (it writes a million chunk rows too: slow at 1M)",
    )
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # child: ENGINE
    parser.add_argument("--mid", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        found = measure(args.home, args.measure, args.mid, full_rebuild=not args.engine_build_only)
        print(json.dumps(found))
        return
    with tempfile.TemporaryDirectory() as directory:
        home = args.home or Path(directory) / "home"
        marker = home / "bench-seed.json"
        if marker.is_file():
            seeded = json.loads(marker.read_text())
        else:
            seeded = seed(home, args.chunks)
            marker.write_text(json.dumps(seeded))
        print(json.dumps(seeded), flush=True)
        results = []
        for engine in args.engines:
            command = [sys.executable, "-m", "bench.bench_scale", "--home", str(home)]
            command += ["--measure", engine, "--mid", seeded["mid"]]
            command += ["--engine-build-only"] if args.engine_build_only else []
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            if done.returncode:
                print(json.dumps({"engine": engine, "failed": done.stderr[-2000:]}), flush=True)
            else:
                line = done.stdout.strip().splitlines()[-1]
                print(line, flush=True)
                results.append(json.loads(line))
        if results:
            print()
            print(table(results))


def table(results: list[dict[str, Any]]) -> str:
    """The engines' figures side by side: a row per measure, a column per engine."""
    header = ["measure", *(f"{r['engine']} ({r['chunks']:,} chunks)" for r in results)]
    rows = [
        [key.replace("_", " "), *("-" if r.get(key) is None else f"{r[key]}" for r in results)]
        for key in results[0]
        if key not in ("engine", "chunks")
    ]
    return columns(header, rows)


if __name__ == "__main__":
    main()
