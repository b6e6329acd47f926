"""Drift (curated pages whose cited evidence moved) and the knowledge-gaps report (drift.md)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cli import output
from cli.commands.proposals import show_proposal
from cli.inputs import read_body
from cli.options import JsonFlag, Repo
from cli.session import session
from edge.results import as_json

PANEL = "Curation"

drift_app = typer.Typer(
    help="Curated pages citing evidence that changed since the version they pin.",
    no_args_is_help=True,
)

CuratedId = Annotated[
    str, typer.Argument(metavar="PAGE_ID", help="The curated page (el_…) that cites the evidence.")
]
EvidenceId = Annotated[
    str, typer.Argument(metavar="EVIDENCE_ID", help="The cited evidence element (el_…).")
]


def register(app: typer.Typer) -> None:
    """Attach this group's commands to the root app."""
    app.add_typer(drift_app, name="drift", rich_help_panel=PANEL)
    app.command("gaps", rich_help_panel=PANEL)(gaps)


@drift_app.command("list")
def drift_list(
    ctx: typer.Context,
    repo: Repo,
    diff: Annotated[
        bool, typer.Option("--diff", help="Print each entry's evidence diff (pinned → current).")
    ] = False,
    json_: JsonFlag = False,
) -> None:
    """Drifted pages: each page, the evidence it cites, pinned and current versions, since when
    (only what you may read on both ends)."""
    s = session(ctx, json_)
    s.emit(as_json(s.service.drift.drift_list(s.caller, repo)), lambda d: _show_drift(d, diff))


def _show_drift(d: dict[str, Any], with_diff: bool) -> None:
    rows = [
        {
            **e,
            "state": "retired" if e["evidence_retired_at"] else f"+{e['versions_behind']}",
        }
        for e in d["entries"]
    ]
    output.table(
        rows,
        [
            ("curated_element_id", "page"),
            ("curated_title", "title"),
            ("evidence_element_id", "evidence"),
            ("pinned.version_id", "pinned"),
            ("current.version_id", "current"),
            ("state", "behind"),
            ("drifted_since", "since"),
        ],
        empty=f"no drifted pages in {d['repository_id']}",
    )
    for e in d["entries"] if with_diff else []:
        output.block(e["diff"] or None, f"{e['curated_element_id']} cites {e['evidence_title']}")


@drift_app.command("review")
def drift_review(
    ctx: typer.Context,
    page_id: CuratedId,
    evidence_id: EvidenceId,
    up_to: Annotated[
        str | None,
        typer.Option(
            "--up-to",
            metavar="VERSION_ID",
            help="The evidence version you reviewed; refused (CONFLICT) if it moved since.",
            show_default=False,
        ),
    ] = None,
    note: Annotated[
        str | None,
        typer.Option("--note", help="Why the page still holds; recorded.", show_default=False),
    ] = None,
    json_: JsonFlag = False,
) -> None:
    """Mark a drift reviewed (curator): recorded and audited; it comes back when the evidence
    moves again."""
    s = session(ctx, json_)
    s.emit(
        as_json(
            s.service.drift.drift_review(
                s.caller, page_id, evidence_id, evidence_version_id=up_to, note=note
            )
        ),
        lambda r: output.line(
            f"reviewed {r['curated_element_id']} against {r['evidence_element_id']} up to "
            f"{r['evidence_version_id']} ({r['review_id']})"
        ),
    )


@drift_app.command("propose")
def drift_propose(
    ctx: typer.Context,
    page_id: CuratedId,
    evidence_id: EvidenceId,
    body_file: Annotated[
        str | None,
        typer.Option(
            "--body-file",
            metavar="FILE",
            help="The page's new body (UTF-8, '-' = stdin); default: its current body, to "
            "revise with `ameide proposal revise`.",
            show_default=False,
        ),
    ] = None,
    summary: Annotated[
        str | None,
        typer.Option(
            "--summary",
            help="Default: which evidence changed, from which version to which, since when.",
            show_default=False,
        ),
    ] = None,
    json_: JsonFlag = False,
) -> None:
    """Open an UPDATE proposal on a drifted page, pinned to its head, citing the evidence's new
    version."""
    s = session(ctx, json_)
    body = read_body(body_file) if body_file is not None else None
    result = s.service.drift.drift_propose(
        s.caller, page_id, evidence_id, body=body, summary=summary
    )
    s.emit(as_json(result), show_proposal)


def gaps(
    ctx: typer.Context,
    repo: Repo,
    topic: Annotated[
        str | None,
        typer.Option(
            "--topic",
            metavar="TEXT",
            help="Count only elements whose head title or body has every word (and questions "
            "with every word); default: the whole repository.",
            show_default=False,
        ),
    ] = None,
    json_: JsonFlag = False,
) -> None:
    """Where knowledge is thin or stale: curated vs evidence counts, retired, superseded, newest
    times, drifted pages, questions that got no curated answer."""
    s = session(ctx, json_)
    s.emit(as_json(s.service.gaps.gaps(s.caller, repo, topic)), _show_gaps)


def _show_gaps(r: dict[str, Any]) -> None:
    c, e = r["curated"], r["evidence"]
    output.heading(f"{r['repository_id']}" + (f"  topic {r['topic']!r}" if r["topic"] else ""))
    output.fields(
        [
            ("curated", f"{c['live']} live, {c['retired']} retired"),
            ("newest curated", c["newest_version_at"]),
            ("evidence", f"{e['live']} live, {e['retired']} retired"),
            ("superseded", f"{e['superseded']} of {e['live']} live evidence"),
            ("newest evidence", e["newest_version_at"]),
            ("newest source", e["newest_source_time"]),
            ("drifted pages", r["drifted"]),
            (
                "questions",
                f"{len(r['unanswered'])} of {r['contexts_scanned']} without a curated answer",
            ),
        ]
    )
    output.table(
        r["unanswered"],
        [("at", "asked at"), ("context_id", "context"), ("query", "question")],
        empty="no unanswered questions",
    )
