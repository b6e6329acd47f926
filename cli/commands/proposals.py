"""Curation: propose, review, accept / reject / rebase / withdraw, revise."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cli import output
from cli.completion import complete_element, complete_proposal, complete_status
from cli.errors import exit_code_of
from cli.inputs import parse_instant, read_body, read_json_object
from cli.options import (
    BodyFile,
    ClassificationOpt,
    ElementKindOpt,
    JsonFlag,
    MetadataFile,
    Rationale,
    Repo,
    TypeKey,
)
from cli.session import session
from edge.results import as_json
from service.governance.queue import QueueFilter

PANEL = "Curation"

proposal_app = typer.Typer(help="The proposal queue.", no_args_is_help=True)

ProposalId = Annotated[
    str,
    typer.Argument(
        metavar="PROPOSAL_ID", help="The proposal (prop_…).", autocompletion=complete_proposal
    ),
]
Summary = Annotated[str, typer.Option("--summary", help="One-line summary of the change.")]


def register(app: typer.Typer) -> None:
    """Attach this group's commands to the root app."""
    app.command("propose", rich_help_panel=PANEL)(propose)
    app.add_typer(proposal_app, name="proposal", rich_help_panel=PANEL)
    app.command("accept", rich_help_panel=PANEL)(accept)
    app.command("reject", rich_help_panel=PANEL)(reject)
    app.command("rebase", rich_help_panel=PANEL)(rebase)
    app.command("withdraw", rich_help_panel=PANEL)(withdraw)


def propose(
    ctx: typer.Context,
    repo: Repo,
    body_file: BodyFile,
    summary: Summary,
    element: Annotated[
        str | None,
        typer.Option(
            "--element",
            metavar="ELEMENT_ID",
            help="UPDATE: the element to change.",
            autocompletion=complete_element,
        ),
    ] = None,
    target_version: Annotated[
        str | None,
        typer.Option(
            "--target-version",
            metavar="VERSION_ID",
            help="UPDATE: the version your body was written against (the pin; required).",
        ),
    ] = None,
    create: Annotated[
        bool, typer.Option("--create", help="Propose a new element instead of an UPDATE.")
    ] = False,
    title: Annotated[
        str | None,
        typer.Option(
            "--title", help="Title (required with --create; UPDATE keeps the pinned one)."
        ),
    ] = None,
    selector: Annotated[
        str,
        typer.Option(
            "--selector",
            help="What the proposal targets: published or baseline_ref (+ --baseline).",
        ),
    ] = "published",
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline", metavar="BASELINE_ID", help="Baseline for --selector baseline_ref."
        ),
    ] = None,
    client_request_id: Annotated[
        str | None,
        typer.Option(
            "--client-request-id",
            metavar="ID",
            help="Idempotency key: repeating the same request returns the original proposal.",
        ),
    ] = None,
    type_key: TypeKey = "ameide:doc",
    kind: ElementKindOpt = "DOCUMENT",
    classification: ClassificationOpt = None,
    metadata_file: MetadataFile = None,
    json_: JsonFlag = False,
) -> None:
    """Open a proposal: an UPDATE pinned to --target-version, or --create a new element."""
    s = session(ctx, json_)
    s.emit(
        s.service.curation.propose(
            s.caller,
            repo,
            body=read_body(body_file),
            summary=summary,
            title=title,
            element_id=element,
            target_version_id=target_version,
            change_kind="CREATE" if create else "UPDATE",
            selector=selector,
            baseline_id=baseline,
            metadata=read_json_object(metadata_file, "metadata file") if metadata_file else None,
            client_request_id=client_request_id,
            type_key=type_key,
            element_kind=kind,
            classification=classification,
        ),
        _show_opened,
    )


def _show_opened(r: dict[str, Any]) -> None:
    replay = " (replay of an earlier request)" if r.get("replay") else ""
    target = (
        f"of {r['target_element_id']} pinned to {r['target_version_id']}"
        if r["change_kind"] == "UPDATE"
        else f"of a new element {r['title']!r}"
    )
    output.line(f"opened proposal {r['proposal_id']}: {r['change_kind']} {target}{replay}")
    if r.get("stale"):  # opened, but no curator can accept it as it is
        element, head = r["target_element_id"], r["current_head_version_id"]
        output.line(
            f"stale: {element} changed since {r['target_version_id']}; its head is {head}. "
            f"Next: read it again (ameide element show {element}) and propose against {head}, "
            f"or have a curator rebase it (ameide rebase {r['proposal_id']})."
        )


@proposal_app.command("list")
def proposal_list(
    ctx: typer.Context,
    repo: Repo,
    status: Annotated[
        str | None,
        typer.Option(
            "--status",
            help="OPEN, ACCEPTED, REJECTED, REBASED or WITHDRAWN (default: all).",
            autocompletion=complete_status,
        ),
    ] = None,
    element: Annotated[
        str | None,
        typer.Option(
            "--element",
            metavar="ELEMENT_ID",
            help="Only proposals for this element.",
            autocompletion=complete_element,
        ),
    ] = None,
    proposer: Annotated[
        str | None,
        typer.Option("--proposer", metavar="PRINCIPAL", help="Only proposals by this principal."),
    ] = None,
    stale: Annotated[
        bool, typer.Option("--stale", help="Only stale proposals (the target moved since).")
    ] = False,
    conflicts: Annotated[
        bool, typer.Option("--conflicts", help="Only proposals with merge conflicts.")
    ] = False,
    since: Annotated[
        str | None,
        typer.Option("--since", metavar="TIMESTAMP", help="Only proposals opened since then."),
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, max=500, help="At most this many.")
    ] = None,
    cursor: Annotated[
        str | None,
        typer.Option(
            "--cursor", metavar="PROPOSAL_ID", help="Continue after this proposal (a page's last)."
        ),
    ] = None,
    newest_first: Annotated[
        bool, typer.Option("--newest-first", help="Newest first (default: oldest first).")
    ] = False,
    json_: JsonFlag = False,
) -> None:
    """The queue: every proposal for curators and auditors, your own for agents; filtered and
    paged."""
    s = session(ctx, json_)
    queue = QueueFilter(
        element_id=element,
        proposer=proposer,
        stale=True if stale else None,
        conflicts=True if conflicts else None,
        since=parse_instant(since, "--since"),
        limit=limit,
        cursor=cursor,
        newest_first=newest_first,
    )
    rows = s.service.curation.proposal_list(s.caller, repo, status, queue)
    s.emit(rows, lambda r: _show_queue(r, more=limit is not None and len(r) == limit))


QUEUE_COLUMNS = [
    ("proposal_id", "proposal"),
    ("status", "status"),
    ("change_kind", "kind"),
    ("stale", "stale"),
    ("has_conflicts", "conflicts"),
    ("target_element_id", "target"),
    ("target_version_id", "pinned"),
    ("proposed_by.actor_id", "by"),
    ("created_at", "created at"),
    ("summary", "summary"),
]


def _show_queue(rows: list[dict[str, Any]], *, more: bool) -> None:
    """A table in a terminal; piped, one tab-separated line per proposal (no header, every
    value whole, in the table's column order) with the paging hint on stderr."""
    if not output.is_terminal():
        output.tsv(rows, [key for key, _ in QUEUE_COLUMNS])
        if more:
            output.note(f"more: --cursor {rows[-1]['proposal_id']}")
        return
    output.table(rows, QUEUE_COLUMNS, empty="no proposals")
    if more:
        output.line(f"more: --cursor {rows[-1]['proposal_id']}", style="dim")


@proposal_app.command("show")
def proposal_show(ctx: typer.Context, proposal_id: ProposalId, json_: JsonFlag = False) -> None:
    """A proposal: staleness, current head, selected version and the diff against its pin;
    when stale, also the diffs against the current head and the published version."""
    s = session(ctx, json_)
    s.emit(s.service.curation.proposal_show(s.caller, proposal_id), show_proposal)


def show_proposal(r: dict[str, Any]) -> None:
    """The proposal view for people."""
    output.heading(
        f"proposal {r['proposal_id']}  {r['status']}  {r['change_kind']}  {r['title']!r}"
    )
    selected = r["target_selector"]["kind"]
    if r["target_selector"]["baseline_id"]:
        selected += f" {r['target_selector']['baseline_id']}"
    output.fields(
        [
            ("summary", r["summary"]),
            ("version", r.get("proposal_version_id")),
            ("proposed", f"{r['created_at']} by {r['proposed_by']['actor_id']}"),
            ("target", r["target_element_id"]),
            ("pinned", r["target_version_id"]),
            ("current head", r["current_head_version_id"]),
            ("stale", r["stale"]),
            ("selector", f"{selected} -> {output.show(r['selected_version_id'])}"),
            ("conflicts", r["has_conflicts"]),
            ("rebased from", r["rebased_from"]),
            ("rebased to", r["rebased_to"]),
            ("decided", f"{r['decided_at']} by {r['decided_by']}" if r["decided_at"] else None),
            ("result", r["result_version_id"]),
        ]
    )
    output.block(r.get("diff"), "diff against the pinned version")
    if r.get("stale"):  # what accepting would now overwrite: the head, and what readers see
        output.block(r.get("diff_against_head"), "diff against the current head")
        published = r.get("published_version_id")
        if published:
            title = f"diff against the published version {published}"
            output.block(r.get("diff_against_published"), title)
        else:
            output.line("--- the target is not published", style="dim")


@proposal_app.command("revise")
def proposal_revise(
    ctx: typer.Context,
    proposal_id: ProposalId,
    body_file: BodyFile,
    summary: Annotated[
        str | None, typer.Option("--summary", help="A new summary.", show_default=False)
    ] = None,
    title: Annotated[
        str | None, typer.Option("--title", help="A new title.", show_default=False)
    ] = None,
    json_: JsonFlag = False,
) -> None:
    """Replace the body of an OPEN proposal (proposer or curator), e.g. to resolve conflicts."""
    s = session(ctx, json_)
    s.emit(
        s.service.curation.revise(s.caller, proposal_id, read_body(body_file), summary, title),
        lambda r: output.line(
            f"revised proposal {r['proposal_id']} (version {r['proposal_version_id']}; "
            f"conflicts: {output.show(r['has_conflicts'])}; stale: {output.show(r['stale'])})"
        ),
    )


def accept(
    ctx: typer.Context,
    proposal_id: ProposalId,
    rationale: Rationale = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Say what accepting would do (stale? conflicts? which version becomes the "
            "head?) and change nothing.",
        ),
    ] = False,
    expected_version: Annotated[
        str | None,
        typer.Option(
            "--expected-version",
            "--expected-revision",
            metavar="VERSION_ID",
            help="The proposal version you reviewed (`proposal show`, `--dry-run`): refused "
            "(CONFLICT) if the proposal was revised since. Default: the version read just "
            "before accepting.",
            show_default=False,
        ),
    ] = None,
    json_: JsonFlag = False,
) -> None:
    """Accept a fresh, conflict-free OPEN proposal (curator): a new version becomes the head.

    Only the proposal version you reviewed is accepted: pass it with --expected-version;
    without it, the version read just before accepting is the one accepted (and named)."""
    s = session(ctx, json_)
    if dry_run:  # the preview is printed in full; a refusal also sets the exit code it would
        preview = as_json(s.service.review.accept_preview(s.caller, proposal_id))
        s.emit(preview, _show_preview)
        if preview["refusal"] is not None:
            raise typer.Exit(exit_code_of(preview["refusal"]["code"]))
        return
    if expected_version is None:  # a revise between this read and the accept is still caught
        shown = as_json(s.service.curation.proposal_show(s.caller, proposal_id))
        expected_version = shown["proposal_version_id"]
    s.emit(
        s.service.review.accept(s.caller, proposal_id, rationale, expected_version),
        lambda r: output.line(
            f"accepted {r['proposal_id']} (version {r['proposal_version_id']}): "
            f"{output.show(r['target_element_id'])} is now at {r['result_version_id']} "
            f"(decision {r['decision_element_id']}; not yet published)"
        ),
    )


def _show_preview(p: dict[str, Any]) -> None:
    if p["would_accept"]:
        target = p["target_element_id"] or "a new element"
        output.line(
            f"would accept {p['proposal_id']}: {target} gets version {p['new_seq']} as its head"
            + (f" (now {p['head_version_id']})" if p["head_version_id"] else "")
            + "; nothing changed"
        )
    else:
        refusal = p["refusal"]
        output.line(
            f"would refuse {p['proposal_id']}: {refusal['code']}: {refusal['message']}; "
            "nothing changed"
        )
    output.fields(
        [
            ("version", p["proposal_version_id"]),
            ("stale", p["stale"]),
            ("conflicts", p["has_conflicts"]),
        ]
    )
    output.block(p["diff"], "diff against the pinned version")


def reject(
    ctx: typer.Context,
    proposal_id: ProposalId,
    rationale: Annotated[str, typer.Option("--rationale", help="Why (required).")],
    json_: JsonFlag = False,
) -> None:
    """Reject an OPEN proposal with a rationale (curator)."""
    s = session(ctx, json_)
    s.emit(
        s.service.review.reject(s.caller, proposal_id, rationale),
        lambda r: output.line(f"rejected {r['proposal_id']} (decision {r['decision_element_id']})"),
    )


def rebase(ctx: typer.Context, proposal_id: ProposalId, json_: JsonFlag = False) -> None:
    """Rebase a stale proposal onto the current head as a new OPEN proposal (three-way merge)."""
    s = session(ctx, json_)
    s.emit(s.service.review.rebase(s.caller, proposal_id), _show_rebased)


def _show_rebased(r: dict[str, Any]) -> None:
    conflicts = (
        "; it has conflicts: revise it with a clean body before accepting"
        if r["has_conflicts"]
        else ""
    )
    output.line(
        f"rebased {r['rebased_from']} -> {r['proposal_id']} onto {r['target_version_id']}"
        f"{conflicts}"
    )


def withdraw(
    ctx: typer.Context,
    proposal_id: ProposalId,
    rationale: Rationale = None,
    json_: JsonFlag = False,
) -> None:
    """Withdraw your own OPEN proposal."""
    s = session(ctx, json_)
    s.emit(
        s.service.review.withdraw(s.caller, proposal_id, rationale),
        lambda r: output.line(f"withdrew {r['proposal_id']} (decision {r['decision_element_id']})"),
    )
