"""Keyword index benchmark: build rate and raw search latency at 10,000 and 100,000 chunks.

Run with ``.venv/bin/python -m bench.bench_index`` (``--sizes 10000`` for a quick run). For
each size it builds a fresh Whoosh index from the synthetic corpus (one bulk ``rebuild`` and,
at the smaller size, incremental ``replace_versions`` batches of 100 versions), then times
ten-word natural questions under a permission filter (3 of 5 repositories, clearance
``internal``): "cold" with a filter never used before (its admitted set is assembled from the
per-segment term caches, which one warm-up search fills), "warm" with the same filter (cached
set), best chunk per version, and the whole-version search.
"""

from __future__ import annotations

import argparse
import itertools
import resource
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator

from bench.corpus import REPOSITORIES, generate_documents, generate_questions
from projection.keyword_index import IndexedChunk, IndexFilter, indexed_chunks
from projection.whoosh import WhooshKeywordIndex

SEED = 20240601
QUESTIONS = 150
BATCH_VERSIONS = 100
INCREMENTAL_UP_TO = 20_000


def corpus_chunks(total: int) -> list[IndexedChunk]:
    """The first ``total`` chunks of the seeded corpus (whole documents, so a few more)."""
    chunks: list[IndexedChunk] = []
    for document in generate_documents(SEED):
        chunks += indexed_chunks(
            body=document.body,
            title=document.title,
            repository_key=document.repository_key,
            element_id=document.element_id,
            version_id=document.version_id,
            classification_rank=document.classification_rank,
            source_kind=document.source_kind,
            type_key=document.type_key,
            recorded_at=document.recorded_at,
        )
        if len(chunks) >= total:
            return chunks
    raise AssertionError("the corpus is endless")


def whole_versions(chunks: list[IndexedChunk], total: int) -> list[IndexedChunk]:
    """The first ``total`` chunks, extended to the end of the last version."""
    end = total
    while end < len(chunks) and chunks[end].version_id == chunks[end - 1].version_id:
        end += 1
    return chunks[:end]


def batches(chunks: list[IndexedChunk], versions: int) -> Iterator[list[IndexedChunk]]:
    """Consecutive batches holding ``versions`` versions each."""
    grouped = itertools.groupby(chunks, key=lambda chunk: chunk.version_id)
    groups = (list(group) for _, group in grouped)
    while batch := list(itertools.islice(groups, versions)):
        yield [chunk for group in batch for chunk in group]


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def percentiles(seconds: list[float]) -> str:
    ordered = sorted(seconds)
    p50 = statistics.median(ordered) * 1000
    p95 = ordered[min(len(ordered) - 1, round(len(ordered) * 0.95))] * 1000
    return f"{p50:.1f} / {p95:.1f} ms"


def permission_filter(variant: int | None = None) -> IndexFilter:
    """Clearance ``internal`` in three of the five repositories (a distinct filter per variant)."""
    readable = dict.fromkeys(REPOSITORIES[:3], 1)
    if variant is not None:
        readable[f"acme/other/repo-{variant}"] = 1
    return IndexFilter(readable)


def search_rows(index: WhooshKeywordIndex, label: str) -> list[tuple[str, str]]:
    questions = generate_questions(SEED, QUESTIONS)
    warm = permission_filter()
    index.search(questions[0], warm)  # open the searcher outside the timings
    cold = [
        timed(lambda q=q, i=i: index.search(q, permission_filter(i)))
        for i, q in enumerate(questions)
    ]
    hot = [timed(lambda q=q: index.search(q, warm)) for q in questions]
    best = [timed(lambda q=q: index.search(q, warm, per_version=1)) for q in questions]
    whole = [timed(lambda q=q: index.search_versions(q, warm)) for q in questions]
    return [
        (f"{label}: search p50 / p95, cold filter", percentiles(cold)),
        (f"{label}: search p50 / p95, warm filter", percentiles(hot)),
        (f"{label}: best chunk per version p50 / p95", percentiles(best)),
        (f"{label}: whole-version search p50 / p95", percentiles(whole)),
    ]


def run_size(corpus: list[IndexedChunk], total: int) -> list[tuple[str, str]]:
    chunks = whole_versions(corpus, total)
    label = f"{len(chunks):,} chunks"
    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory() as directory:
        index = WhooshKeywordIndex(directory)
        if total <= INCREMENTAL_UP_TO:
            seconds = timed(
                lambda: [index.replace_versions(b) for b in batches(chunks, BATCH_VERSIONS)]
            )
            rows.append((f"{label}: incremental build", f"{len(chunks) / seconds:,.0f} chunks/s"))
        seconds = timed(lambda: index.rebuild(chunks, position=1))
        rows.append((f"{label}: bulk rebuild", f"{len(chunks) / seconds:,.0f} chunks/s"))
        rows += search_rows(index, label)
        index.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    sizes = parser.parse_args().sizes
    corpus = corpus_chunks(max(sizes))
    rows = [row for size in sizes for row in run_size(corpus, size)]
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rows.append(("peak RSS", f"{peak_mib:,.0f} MiB"))
    width = max(len(measure) for measure, _ in rows)
    print(f"{'measure'.ljust(width)}  result")
    print(f"{'-' * width}  {'-' * 20}")
    for measure, result in rows:
        print(f"{measure.ljust(width)}  {result}")


if __name__ == "__main__":
    main()
