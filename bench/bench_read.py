"""Read benchmark: ``read_context`` latency and peak memory at 10,000 and 100,000 chunks.

Run: ``.venv/bin/python -m bench.bench_read`` (``--sizes 10000`` for a quick run). For each size
it seeds a fresh SQLite database with the synthetic corpus of ``bench.corpus`` (five
repositories, canonical and evidence documents, a relationship chain per repository, a
published baseline, then a second version of every tenth canonical document), builds the index
with ``ameide index rebuild``'s code path, and times ten-word questions through the whole
``read_context`` (selection, trimming, ranking, packaging, storing the context) beside the raw
Whoosh search with the same permission filter: published keyword recall, ``as_of`` recall and
2-hop expansion; plus the index build rate and the latency of one committed write until the
index has it.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.corpus import REPOSITORIES, CorpusDocument, generate_documents, generate_questions
from domain.model import Element, Provenance, Relationship, RelationshipKind
from domain.values import Classification, SourceKind
from projection.chunks import split_into_chunks
from projection.keyword_index import IndexFilter
from runtime import App, build_app
from service.authz import Caller
from service.settings import Settings
from storage.db import SqlAlchemyUnitOfWork

SEED = 20240601
QUESTIONS = 100
ADMIN = Caller("user:admin", purpose="bench")
AGENT = Caller("agent:bench-reader", purpose="bench")
LEVELS = list(Classification)


def seed(app: App, total_chunks: int) -> tuple[int, datetime]:
    """Write documents until at least ``total_chunks`` chunks (as the index splits them) are
    indexed; (chunks, mid instant)."""
    svc = app.service
    svc.admin.bootstrap_admin(ADMIN.principal_id)
    for repo in REPOSITORIES:
        svc.admin.create_repository(ADMIN, repo)
        svc.admin.grant(ADMIN, AGENT.principal_id, "reader", repo, "internal")
        svc.admin.grant(ADMIN, "user:bench-publisher", "publisher", repo, "restricted")
    chunks, canonical = 0, []
    prov = Provenance("user", "user:bench")
    with SqlAlchemyUnitOfWork(app.engine) as uow:  # no index hook: the rebuild below indexes
        last: dict[str, str] = {}
        for doc in generate_documents(SEED):
            el = _write(uow, app.clock.now(), doc, prov)
            if el.source_kind is SourceKind.CANONICAL:
                canonical.append(el)
            if doc.repository_key in last:
                uow.store.insert_relationships(
                    [
                        Relationship.new(
                            doc.repository_key,
                            RelationshipKind.REFERENCE,
                            "ameide:cites",
                            last[doc.repository_key],
                            el.element_id,
                            {},
                            app.clock.now(),
                            "user:bench",
                        )
                    ]
                )
            last[doc.repository_key] = el.element_id
            chunks += len(split_into_chunks(doc.body))
            if chunks >= total_chunks:
                break
        uow.commit()
    publisher = Caller("user:bench-publisher", purpose="bench")
    for repo in REPOSITORIES:
        svc.publishing.promote(
            publisher, svc.publishing.create_baseline(publisher, repo).baseline_id, repo, "bench"
        )
    mid = app.clock.now()
    with SqlAlchemyUnitOfWork(app.engine) as uow:
        for el in canonical[::10]:
            _next(uow, el, app.clock.now(), prov)
        uow.commit()
    return chunks, mid


def _write(uow: Any, at: datetime, doc: CorpusDocument, prov: Provenance) -> Element:
    el = Element.new(
        doc.repository_key,
        kind="DOCUMENT",
        type_key=doc.type_key,
        source_kind=SourceKind(doc.source_kind),
        classification=LEVELS[doc.classification_rank],
        at=at,
        by="user:bench",
    )
    uow.store.insert_element(el)
    _next(uow, el, at, prov, doc.title, doc.body)
    return el


def _next(
    uow: Any, el: Element, at: datetime, prov: Provenance, title: str = "", body: str = ""
) -> None:
    previous = uow.store.get_version(el.head_version_id) if el.head_version_id else None
    v = el.next_version(
        title=title or previous.title,
        body=body or previous.body + "\nrevised\n",
        metadata={},
        at=at,
        provenance=prov,
    )
    uow.store.move_head(el.element_id, el.head_version_id, v)
    uow.store.insert_version(v)
    el.head_version_id, el.head_seq = v.version_id, v.seq


def timings(action: Callable[[str], object], questions: list[str]) -> str:
    """p50 / p95 milliseconds of ``action`` over the questions (after one warm-up)."""
    action(questions[0])
    seconds = []
    for q in questions:
        started = time.perf_counter()
        action(q)
        seconds.append(time.perf_counter() - started)
    seconds.sort()
    p95 = seconds[min(len(seconds) - 1, round(len(seconds) * 0.95))]
    return f"{statistics.median(seconds) * 1000:.1f} / {p95 * 1000:.1f} ms"


def run_size(total: int, home: Path) -> list[tuple[str, str]]:
    app = build_app(Settings(home=home), migrate=True)
    svc = app.service
    _chunks, mid = seed(app, total)
    assert app.indexer is not None
    started = time.perf_counter()
    built = app.indexer.rebuild()
    rate = built["chunks"] / (time.perf_counter() - started)
    label = f"{built['chunks']:,} chunks"
    questions = generate_questions(SEED, QUESTIONS)
    tenant, org, repo = REPOSITORIES[0].split("/")
    scope = {"tenant_id": tenant, "organization_id": org, "repository_id": repo}

    def read(q: str, **extra: Any) -> object:
        return svc.reading.read_context(AGENT, {"scope": scope, "query": q, **extra})

    raw = IndexFilter({REPOSITORIES[0]: 1})
    rows = [
        (f"{label}: index build (rebuild)", f"{rate:,.0f} chunks/s"),
        (
            f"{label}: raw Whoosh search, best chunk per version",
            timings(lambda q: app.reads.index.search(q, raw, limit=10, per_version=1), questions),
        ),
        (f"{label}: read_context published keyword recall", timings(read, questions)),
        (
            f"{label}: read_context as_of recall",
            timings(lambda q: read(q, as_of=mid.isoformat()), questions),
        ),
        (
            f"{label}: read_context 2-hop expansion",
            timings(lambda q: read(q, expand={"hops": 2}), questions),
        ),
        (f"{label}: one write until indexed", _incremental(app)),
    ]
    app.close()
    return rows


def _incremental(app: App) -> str:
    svc = app.service
    made = svc.elements.create_element(ADMIN, REPOSITORIES[0], title="t", body="# T\n\nx\n")
    element_id = made.element.element_id
    seconds = []
    for n in range(20):
        started = time.perf_counter()
        with app.uow() as uow:
            el = uow.store.get_element(element_id)
            _next(uow, el, app.clock.now(), Provenance("user", "user:bench"), "t", f"# T\n\n{n}\n")
            uow.commit()
        # the index is kept off the write path: a read catches it up (read your writes), so
        # "until indexed" is the commit plus what the next read waits for
        app.reads.catch_up_index()
        seconds.append(time.perf_counter() - started)
    return f"{statistics.median(seconds) * 1000:.1f} ms (p50, commit + index catch-up)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    rows = []
    for size in parser.parse_args().sizes:
        with tempfile.TemporaryDirectory() as directory:
            rows += run_size(size, Path(directory) / "home")
    rows.append(
        ("peak RSS", f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MiB")
    )
    width = max(len(measure) for measure, _ in rows)
    print(f"{'measure'.ljust(width)}  result")
    print(f"{'-' * width}  {'-' * 24}")
    for measure, result in rows:
        print(f"{measure.ljust(width)}  {result}")


if __name__ == "__main__":
    main()
