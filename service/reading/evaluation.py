"""The retrieval-quality harness: one golden set, three pipelines, side by side.

- ``keyword``: plain keyword recall — the index's best chunk per version in BM25 order, inside
  the same permission filter and selection as a read, nothing else;
- ``full``: the read_context pipeline without expansion (both BM25 signals, trust, recency,
  superseded demotion, near-duplicate collapse into the right representative);
- ``full_expanded``: the same with one hop of relationship expansion;
- ``hybrid`` (only with the ``semantic`` extra): ``full`` with semantic recall fused in — what
  ``read_context`` does by default when the extra is installed.

Each returned item is keyed by its element id when the dataset grades element ids, else by the
provenance path of evidence; metrics come from ``projection.eval_metrics``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from domain.errors import InvalidArgument
from domain.permissions import Action
from projection.dedup import duplicate_rate
from projection.eval_metrics import (
    GoldenQuery,
    RunResult,
    evaluate_run,
    mean_metrics,
    parse_dataset,
)
from service import results_ops as ro
from service.authz import Caller
from service.core import repo_key
from service.kernel import Kernel, acting
from service.reading.limits import MAX_CHARS
from service.reading.pipeline import ReadPipeline
from service.reading.recall import index_filter
from service.reading.request import ReadRequest
from service.reading.selection import readable_repositories, resolve_selection

PIPELINES = ("keyword", "full", "full_expanded")
MAX_K = 50


class Evaluation:
    """``evaluate``: precision@k, recall@k, nDCG@k, MRR, duplicate rate, context size."""

    def __init__(self, k: Kernel, pipeline: ReadPipeline) -> None:
        self.k = k
        self.pipeline = pipeline

    @acting
    def eval_pipelines(self) -> tuple[str, ...]:
        """The pipelines ``evaluate`` compares, in order (a pipeline that needs an optional
        extra, such as semantic recall, adds itself here when it is installed)."""
        return PIPELINES + (("hybrid",) if self.pipeline.semantic is not None else ())

    @acting
    def evaluate(
        self,
        caller: Caller,
        repo: str,
        dataset: str | Sequence[str],
        *,
        k: int = 10,
        selector: str = "published",
        include_per_query: bool = False,
    ) -> ro.Evaluation:
        """Run every query of a JSONL golden set (text or lines) through the three pipelines."""
        if not 1 <= k <= MAX_K:
            raise InvalidArgument(f"k must be between 1 and {MAX_K}", field="k")
        lines = dataset.splitlines() if isinstance(dataset, str) else list(dataset)
        try:
            queries = parse_dataset(lines)
        except ValueError as exc:
            raise InvalidArgument(f"dataset: {exc}", field="dataset") from None
        key = repo_key(repo)
        with self.k.uow(readonly=True) as uow:
            self.k.gate.repository(uow, caller, key, Action.READ)
            self.k.audit.log_read(uow, caller, "eval", key, queries=len(queries), k=k)
            uow.commit()
        self.pipeline.catch_up_index()
        if self.pipeline.semantic is not None:
            self.pipeline.semantic.build()  # every version embedded before hybrid is scored
        names = self.eval_pipelines()
        rows: dict[str, list[dict[str, float]]] = {name: [] for name in names}
        per_query = []
        for q in queries:
            runs = {name: self._run_pipeline(caller, key, q, name, k, selector) for name in names}
            scores = {name: evaluate_run(q, run, k) for name, run in runs.items()}
            for name in names:
                rows[name].append(scores[name])
            per_query.append(
                {"query": q.query, **{n: list(runs[n].keys) for n in names}, "metrics": scores}
            )
        out: dict[str, Any] = {
            "repository_id": key,
            "k": k,
            "selector": selector,
            "queries": len(queries),
            "pipelines": {name: mean_metrics(rows[name]) for name in names},
        }
        if include_per_query:
            out["per_query"] = per_query
        return ro.Evaluation.model_validate(out)

    def _request(self, key: str, q: GoldenQuery, k: int, selector: str, hops: int) -> ReadRequest:
        tenant, org, repository = key.split("/")
        return ReadRequest.model_validate(
            {
                "scope": {"tenant_id": tenant, "organization_id": org, "repository_id": repository},
                "selector": {"kind": selector},
                "query": q.query,
                "expand": {"hops": hops},
                "budget": {"max_items": k, "max_chars": MAX_CHARS},
                "as_of": q.as_of,
            }
        )

    def _run_pipeline(
        self, caller: Caller, key: str, q: GoldenQuery, name: str, k: int, selector: str
    ) -> RunResult:
        req = self._request(key, q, k, selector, 1 if name == "full_expanded" else 0)
        if name == "keyword":
            return self._keyword_run(caller, req, q, k)
        items = self.pipeline.run_read(caller, req, semantic=name == "hybrid")["items"][:k]
        with self.k.uow(readonly=True) as uow:
            rows = uow.store.version_rows([i["version_id"] for i in items])
        bodies = [rows[i["version_id"]]["body"] for i in items]
        return RunResult(
            keys=tuple(
                _key(q, i["element_id"], i["provenance"]["path"], i["title"]) for i in items
            ),
            duplicate_rate=duplicate_rate([i["content"] for i in items], bodies),
            context_chars=sum(len(i["content"]) for i in items),
        )

    def _keyword_run(self, caller: Caller, req: ReadRequest, q: GoldenQuery, k: int) -> RunResult:
        with self.k.uow(readonly=True) as uow:
            perms = readable_repositories(self.k.gate, uow, caller, req.scope)
            selection = resolve_selection(uow, perms, req, req.as_of)
            flt = index_filter(perms, selection, req.as_of)
            hits = self.pipeline.index.search(q.query, flt, limit=k, per_version=1)
            rows = uow.store.version_rows([h.version_id for h in hits])
        shown = [rows[h.version_id]["body"][h.start : h.end] for h in hits]
        return RunResult(
            keys=tuple(
                _key(q, h.element_id, rows[h.version_id]["path"], rows[h.version_id]["title"])
                for h in hits
            ),
            duplicate_rate=duplicate_rate(shown, [rows[h.version_id]["body"] for h in hits]),
            context_chars=sum(len(text) for text in shown),
        )


def _key(q: GoldenQuery, element_id: str, path: str | None, title: str) -> str:
    """The dataset key of a result: its element id if graded so, else the path of evidence, else
    ``title:<title>`` (canonical content has no path; ids are not known before it exists)."""
    if element_id in q.relevant:
        return element_id
    return path if path else f"title:{title}"
