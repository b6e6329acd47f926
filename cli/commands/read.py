"""Reading: context for agents, citation checks, replays and the retrieval-quality harness.

Ranking weights come from the ``ranking`` object of ``HOME/config.json`` (see docs/eval.md),
applied by the composition root.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cli import output
from cli.errors import EXIT_CITATIONS_INVALID
from cli.inputs import decode_utf8, read_bytes
from cli.options import AsOf, JsonFlag
from cli.session import CliState, session
from domain.errors import InvalidArgument
from edge.reading import (
    DEFAULT_HOPS,
    DEFAULT_MAX_CHARS,
    DEFAULT_MAX_ITEMS,
    DEFAULT_MAX_NODES,
    MAX_CHARS,
    MAX_HOPS,
    MAX_ITEMS,
    MAX_NODES,
    read_request,
)
from edge.results import as_json

if TYPE_CHECKING:
    from service.app import MemoryService

PANEL = "Reading"

Scope = Annotated[
    str,
    typer.Option(
        "--repo",
        metavar="T/O/R",
        help="The repository as TENANT/ORG/REPO, or TENANT/ORG for every repository of the "
        "organization you may read.",
    ),
]
Baseline = Annotated[
    str | None, typer.Option("--baseline", metavar="ID", help="Baseline of baseline_ref.")
]
NoEvidence = Annotated[bool, typer.Option("--no-evidence", help="Leave ingested evidence out.")]
MaxItems = Annotated[int, typer.Option("--max-items", help=f"At most this many (1-{MAX_ITEMS}).")]
ContextId = Annotated[str, typer.Argument(metavar="CONTEXT_ID", help="A stored context (ctx_…).")]


def register(app: typer.Typer) -> None:
    """Attach this group's commands to the root app."""
    app.command("context", rich_help_panel=PANEL)(context)
    app.command("search", rich_help_panel=PANEL)(search)
    app.command("verify-citations", rich_help_panel=PANEL)(verify_citations)
    app.command("replay", rich_help_panel=PANEL)(replay)
    app.command("eval", rich_help_panel=PANEL)(evaluate)


def _service(s: CliState) -> MemoryService:
    """The service (build_app applied the config file's ranking weights)."""
    return s.service


def context(
    ctx: typer.Context,
    repo: Scope,
    query: Annotated[str | None, typer.Argument(metavar="QUERY", help="What to look for.")] = None,
    selector: Annotated[
        str, typer.Option("--selector", help="published, baseline_ref, head or version_ref.")
    ] = "published",
    baseline: Baseline = None,
    element: Annotated[
        list[str] | None, typer.Option("--element", metavar="ID", help="Fetch this element.")
    ] = None,
    version: Annotated[
        list[str] | None, typer.Option("--version", metavar="ID", help="Fetch this version.")
    ] = None,
    as_of: AsOf = None,
    valid_at: Annotated[
        str | None,
        typer.Option("--valid-at", metavar="TIMESTAMP", help="Keep versions valid then."),
    ] = None,
    no_evidence: NoEvidence = False,
    hops: Annotated[
        int, typer.Option("--hops", help=f"Relationship hops to expand (0-{MAX_HOPS}).")
    ] = DEFAULT_HOPS,
    rel_type: Annotated[
        list[str] | None,
        typer.Option("--rel-type", metavar="TYPE_KEY", help="Only expand along these types."),
    ] = None,
    max_nodes: Annotated[
        int, typer.Option("--max-nodes", help=f"Expansion cap (1-{MAX_NODES}).")
    ] = DEFAULT_MAX_NODES,
    max_items: MaxItems = DEFAULT_MAX_ITEMS,
    max_chars: Annotated[
        int, typer.Option("--max-chars", help=f"Context block size cap (1-{MAX_CHARS}).")
    ] = DEFAULT_MAX_CHARS,
    detail: Annotated[str, typer.Option("--detail", help="titles, excerpt or full.")] = "excerpt",
    explain: Annotated[bool, typer.Option("--explain", help="Score breakdowns and trace.")] = False,
    json_: JsonFlag = False,
) -> None:
    """Permission-trimmed, version-pinned context with citations (stored as a context id)."""
    s = session(ctx, json_)
    request = read_request(
        repo,
        query,
        selector=selector,
        baseline_id=baseline,
        element_ids=element or (),
        version_ids=version or (),
        as_of=as_of,
        valid_at=valid_at,
        include_evidence=not no_evidence,
        hops=hops,
        relationship_types=rel_type or (),
        max_nodes=max_nodes,
        max_items=max_items,
        max_chars=max_chars,
        detail_level=detail,
        explain=explain,
    )
    s.emit(_service(s).reading.read_context(s.caller, request), _show_context)


def search(
    ctx: typer.Context,
    repo: Scope,
    query: Annotated[str, typer.Argument(metavar="QUERY", help="What to look for.")],
    selector: Annotated[
        str, typer.Option("--selector", help="published, baseline_ref or head.")
    ] = "published",
    baseline: Baseline = None,
    as_of: AsOf = None,
    no_evidence: NoEvidence = False,
    max_items: MaxItems = DEFAULT_MAX_ITEMS,
    json_: JsonFlag = False,
) -> None:
    """Find what to read: titles and ids only (``memory.search`` of the agents; a stored
    context like any read). Then ``ameide context --element ID`` or ``element show ID``."""
    s = session(ctx, json_)
    request = read_request(
        repo,
        query,
        selector=selector,
        baseline_id=baseline,
        as_of=as_of,
        include_evidence=not no_evidence,
        max_items=max_items,
        detail_level="titles",
    )
    s.emit(_service(s).reading.read_context(s.caller, request), _show_hits)


def _show_hits(r: dict[str, Any]) -> None:
    used = r["selector_used"]
    output.heading(f"context {r['context_id']}: {used['kind']} as of {used['resolved_at']}")
    if not r["items"]:
        output.line("no items", style="dim")
    for n, item in enumerate(r["items"], start=1):
        output.line(
            f"[{n}] {item['title']}  {item['element_id']} @ {item['version_id']}  "
            f"{item['source_kind']}  score {item['score']}"
        )


def _show_context(r: dict[str, Any]) -> None:
    used = r["selector_used"]
    output.heading(
        f"context {r['context_id']}: {used['kind']}"
        + (f" baseline {used['baseline_id']}" if used.get("baseline_id") else "")
        + f" as of {used['resolved_at']}"
        + (" (truncated by the budget)" if r["truncated"] else "")
    )
    if not r["items"]:
        output.line("no items", style="dim")
    for n, item in enumerate(r["items"], start=1):
        output.line(f"[{n}] {item['title']}", style="bold")
        spans = ", ".join(
            f"{c['excerpt']['chunk_key']} [{c['excerpt']['start']}, {c['excerpt']['end']})"
            for c in item["citations"]
        )
        output.fields(
            [
                ("version", f"{item['element_id']} @ {item['version_id']}"),
                (
                    "source",
                    f"{item['source_kind']} {item['repository_id']}"
                    + (f" {item['provenance']['path']}" if item["provenance"]["path"] else ""),
                ),
                ("why", f"{item['why_included']} (score {item['score']})"),
                ("cites", spans or None),
            ]
        )
        if "score_breakdown" in item:
            terms = item["score_breakdown"].items()
            output.fields([("score", ", ".join(f"{k} {v['contribution']:+g}" for k, v in terms))])
        output.block(item["content"])
    if r.get("trace"):
        output.block(json.dumps(r["trace"], indent=2, default=str), "trace")


def _read_citations(path: str) -> list[Any]:
    data, name = read_bytes(path, "citations file")
    try:
        value = json.loads(decode_utf8(data, name, "citations file"))
    except json.JSONDecodeError as exc:
        raise InvalidArgument(f"citations file {name} is not valid JSON: {exc.msg}") from None
    if isinstance(value, dict) and isinstance(value.get("citations"), list):
        return list(value["citations"])
    if not isinstance(value, list):
        raise InvalidArgument(f"citations file {name} must hold a list (or {{'citations': []}})")
    return value


def verify_citations(
    ctx: typer.Context,
    context_id: ContextId,
    citations: Annotated[
        str,
        typer.Option(
            "--citations", metavar="FILE.json", help="JSON list of citations ('-' stdin)."
        ),
    ],
    json_: JsonFlag = False,
) -> None:
    """Check citations against a stored context; exits 10 when any was not in it."""
    s = session(ctx, json_)
    verdict = as_json(
        s.service.reading.verify_citations(s.caller, context_id, _read_citations(citations))
    )
    s.emit(verdict, _show_verdict)
    if not verdict["all_valid"]:
        raise typer.Exit(EXIT_CITATIONS_INVALID)


def _show_verdict(v: dict[str, Any]) -> None:
    output.heading(f"{v['valid']} valid, {v['invalid']} invalid citation(s) of {v['context_id']}")
    for r in v["results"]:
        c = r["citation"] if isinstance(r["citation"], dict) else {}
        span = c.get("excerpt") or {}
        output.line(
            ("ok  " if r["valid"] else "BAD ")
            + f"{c.get('version_id')} {span.get('chunk_key', '')} "
            + (f"[{span.get('start')}, {span.get('end')}) " if span else "")
            + r["reason"]
        )


def replay(
    ctx: typer.Context,
    context_id: ContextId,
    as_recorded: Annotated[
        bool,
        typer.Option("--as-recorded", help="Pin the replay to the instant the context resolved."),
    ] = False,
    json_: JsonFlag = False,
) -> None:
    """Re-run a stored context's request as its principal and show what differs."""
    s = session(ctx, json_)
    s.emit(_service(s).reading.replay(s.caller, context_id, as_recorded=as_recorded), _show_replay)


def _show_replay(r: dict[str, Any]) -> None:
    if "error" in r:
        output.line(f"replay of {r['context_id']} failed: {r['error']['message']}")
        return
    state = "no difference" if r["identical"] else f"{len(r['differences'])} difference(s)"
    output.heading(f"replay of {r['context_id']} as {r['replayed_as']}: {state}")
    before, after = r["selector_used"]["before"], r["selector_used"]["after"]
    if before.get("baseline_id") != after.get("baseline_id"):
        output.fields([("baseline", f"{before.get('baseline_id')} -> {after.get('baseline_id')}")])
    output.table(
        r["differences"],
        [
            ("element_id", "element"),
            ("change", "change"),
            ("before_version_id", "before"),
            ("after_version_id", "after"),
            ("before_rank", "was"),
            ("after_rank", "now"),
        ],
        empty="the replay returned the same items",
    )


def evaluate(
    ctx: typer.Context,
    dataset: Annotated[str, typer.Option("--dataset", metavar="FILE.jsonl", help="Golden set.")],
    repo: Annotated[str, typer.Option("--repo", metavar="T/O/R", help="Repository to query.")],
    k: Annotated[int, typer.Option("--k", help="Cut-off of the metrics (1-50).")] = 10,
    selector: Annotated[str, typer.Option("--selector", help="Selector of every read.")] = (
        "published"
    ),
    json_: JsonFlag = False,
) -> None:
    """Precision, recall, nDCG, MRR, duplicate rate and context size of three pipelines."""
    s = session(ctx, json_)
    data, name = read_bytes(dataset, "dataset")
    text = decode_utf8(data, name, "dataset")
    s.emit(
        _service(s).evaluation.evaluate(s.caller, repo, text, k=k, selector=selector), _show_eval
    )


def _show_eval(r: dict[str, Any]) -> None:
    k = r["k"]
    output.heading(f"{r['queries']} queries on {r['repository_id']} ({r['selector']}), k={k}")
    rows = [
        {
            "pipeline": name,
            **{m: f"{v:.3f}" if m != "context_chars" else f"{v:.0f}" for m, v in metrics.items()},
        }
        for name, metrics in r["pipelines"].items()
    ]
    output.table(
        rows,
        [
            ("pipeline", "pipeline"),
            ("precision", f"P@{k}"),
            ("recall", f"R@{k}"),
            ("ndcg", f"nDCG@{k}"),
            ("mrr", "MRR"),
            ("duplicate_rate", "dup rate"),
            ("context_chars", "mean chars"),
        ],
        empty="no pipelines",
    )
