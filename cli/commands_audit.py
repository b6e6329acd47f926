"""Auditing: repository history, the access log, hash-chain verification."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cli import output
from cli.errors import EXIT_AUDIT_CHAIN_BROKEN
from cli.inputs import parse_instant
from cli.options import JsonFlag, Repo
from cli.session import session
from domain.errors import InvalidArgument

PANEL = "Audit"

audit_app = typer.Typer(help="The hash-chained audit log.", no_args_is_help=True)

Limit = Annotated[int, typer.Option("--limit", help="At most this many rows.")]


def register(app: typer.Typer) -> None:
    """Attach this group's commands to the root app."""
    app.command("history", rich_help_panel=PANEL)(history)
    app.command("access-log", rich_help_panel=PANEL)(access_log)
    app.add_typer(audit_app, name="audit", rich_help_panel=PANEL)


def history(
    ctx: typer.Context,
    repo: Repo,
    since: Annotated[
        str | None,
        typer.Option("--since", metavar="TIMESTAMP", help="From this instant (ISO-8601)."),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option("--until", metavar="TIMESTAMP", help="Up to this instant (ISO-8601)."),
    ] = None,
    element: Annotated[
        str | None,
        typer.Option("--element", metavar="ELEMENT_ID", help="Only events about this element."),
    ] = None,
    actor: Annotated[
        str | None, typer.Option("--actor", metavar="PRINCIPAL", help="Only events by this actor.")
    ] = None,
    limit: Limit = 1000,
    json_: JsonFlag = False,
) -> None:
    """Audit events of a repository, oldest first: what happened, when, by whom, for whom."""
    s = session(ctx, json_)
    s.emit(
        s.service.history(
            s.caller,
            repo,
            since=parse_instant(since, "--since"),
            until=parse_instant(until, "--until"),
            element_id=element,
            actor=actor,
            limit=limit,
        ),
        _show_events,
    )


def _show_events(rows: list[dict[str, Any]]) -> None:
    output.table(
        [{**e, "subject": _subject(e)} for e in rows],
        [
            ("occurred_at", "at"),
            ("event_type", "event"),
            ("actor", "actor"),
            ("on_behalf_of", "on behalf of"),
            ("subject", "subject"),
        ],
        empty="no events",
    )


def _subject(e: dict[str, Any]) -> str:
    ids = [e[k] for k in ("proposal_id", "element_id", "version_id", "baseline_id") if e.get(k)]
    payload = e.get("payload") or {}
    if "principal_id" in payload:  # grants and tokens name their subject in the payload
        ids.append(f"{payload['principal_id']} {payload.get('role', '')}".strip())
    return " ".join(ids)


def access_log(
    ctx: typer.Context, repo: Repo, limit: Limit = 1000, json_: JsonFlag = False
) -> None:
    """Who read what in a repository, on behalf of whom and why (auditor), newest first."""
    s = session(ctx, json_)
    s.emit(
        s.service.access_log(s.caller, repo, limit),
        lambda rows: output.table(
            rows,
            [
                ("at", "at"),
                ("principal_id", "principal"),
                ("on_behalf_of", "on behalf of"),
                ("purpose", "purpose"),
                ("operation", "operation"),
                ("subject", "subject"),
            ],
            empty=f"no reads recorded in {repo}",
        ),
    )


@audit_app.command("verify")
def audit_verify(
    ctx: typer.Context,
    repo: Annotated[
        str | None,
        typer.Option(
            "--repo", metavar="TENANT/ORG/REPO", help="The repository whose chain to check."
        ),
    ] = None,
    global_: Annotated[
        bool,
        typer.Option(
            "--global",
            help="Check the global chain instead (grants above repositories, tokens).",
        ),
    ] = False,
    json_: JsonFlag = False,
) -> None:
    """Check a hash chain (a repository's, or --global); exits 9 naming the first broken event."""
    s = session(ctx, json_)
    if (repo is None) == (not global_):
        raise InvalidArgument("give exactly one of --repo TENANT/ORG/REPO or --global")
    verdict = s.service.verify_audit(s.caller, None if global_ else repo)
    s.emit(verdict, _show_verdict)
    if not verdict["ok"]:
        output.error(
            "AUDIT_CHAIN_BROKEN",
            f"audit chain of {verdict['chain']} is broken at event "
            f"{verdict['first_broken_event_id']}: {verdict['reason']}",
            as_json=False,  # the verdict above is this command's one JSON document
        )
        raise typer.Exit(EXIT_AUDIT_CHAIN_BROKEN)


def _show_verdict(v: dict[str, Any]) -> None:
    if v["ok"]:
        output.line(f"audit chain of {v['chain']} intact: {v['events_checked']} events")
    else:
        output.line(
            f"audit chain of {v['chain']} BROKEN at event {v['first_broken_event_id']} "
            f"({v['reason']}); {v['events_checked']} events before it verified"
        )
