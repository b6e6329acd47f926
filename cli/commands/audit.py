"""Auditing: repository history, the access log, hash-chain verification."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from cli import checkpoints, output
from cli.errors import EXIT_AUDIT_CHAIN_BROKEN
from cli.inputs import parse_instant
from cli.options import JsonFlag, Repo
from cli.session import session
from domain.errors import InvalidArgument
from edge.exports import EXPORT_FORMATS, events_csv, events_json
from edge.results import as_json

PANEL = "Audit"

audit_app = typer.Typer(help="The hash-chained audit log.", no_args_is_help=True)

Limit = Annotated[int, typer.Option("--limit", help="At most this many rows.")]
Since = Annotated[
    str | None, typer.Option("--since", metavar="TIMESTAMP", help="From this instant (ISO-8601).")
]
Until = Annotated[
    str | None,
    typer.Option("--until", metavar="TIMESTAMP", help="Up to this instant (ISO-8601)."),
]
AboutElement = Annotated[
    str | None,
    typer.Option("--element", metavar="ELEMENT_ID", help="Only events about this element."),
]
ByActor = Annotated[
    str | None, typer.Option("--actor", metavar="PRINCIPAL", help="Only events by this actor.")
]


def register(app: typer.Typer) -> None:
    """Attach this group's commands to the root app."""
    app.command("history", rich_help_panel=PANEL)(history)
    app.command("access-log", rich_help_panel=PANEL)(access_log)
    app.add_typer(audit_app, name="audit", rich_help_panel=PANEL)


def history(
    ctx: typer.Context,
    repo: Repo,
    since: Since = None,
    until: Until = None,
    element: AboutElement = None,
    actor: ByActor = None,
    limit: Limit = 1000,
    json_: JsonFlag = False,
) -> None:
    """Audit events of a repository, oldest first: what happened, when, by whom, for whom."""
    s = session(ctx, json_)
    s.emit(
        s.service.history.history(
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
        s.service.history.access_log(s.caller, repo, limit),
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


ChainRepo = Annotated[
    str | None,
    typer.Option("--repo", metavar="TENANT/ORG/REPO", help="The repository whose chain it is."),
]
GlobalChain = Annotated[
    bool,
    typer.Option("--global", help="The global chain instead (grants above repositories, tokens)."),
]


def _chain(repo: str | None, global_: bool) -> str | None:
    if (repo is None) == (not global_):
        raise InvalidArgument("give exactly one of --repo TENANT/ORG/REPO or --global")
    return None if global_ else repo


@audit_app.command("verify")
def audit_verify(
    ctx: typer.Context,
    repo: ChainRepo = None,
    global_: GlobalChain = False,
    checkpoint: Annotated[
        Path | None,
        typer.Option(
            "--checkpoint",
            metavar="FILE",
            help="Also prove the chain still extends this checkpoint (from `audit checkpoint`): "
            "catches even a consistent rewrite of the newest events and the head row.",
        ),
    ] = None,
    json_: JsonFlag = False,
) -> None:
    """Check a hash chain (a repository's, or --global); exits 9 naming the first broken event."""
    s = session(ctx, json_)
    chain = _chain(repo, global_)
    kept = checkpoints.load(s.home, checkpoint) if checkpoint is not None else None
    verdict = as_json(s.service.history.verify_audit(s.caller, chain, kept))
    s.emit(verdict, _show_verdict)
    if not verdict["ok"]:
        at = verdict["first_broken_event_id"]
        output.error(
            "AUDIT_CHAIN_BROKEN",
            f"audit chain of {verdict['chain']} is broken"
            + (f" at event {at}" if at is not None else "")
            + f": {verdict['reason']}",
            as_json=False,  # the verdict above is this command's one JSON document
        )
        raise typer.Exit(EXIT_AUDIT_CHAIN_BROKEN)


@audit_app.command("checkpoint")
def audit_checkpoint(
    ctx: typer.Context,
    repo: ChainRepo = None,
    global_: GlobalChain = False,
    json_: JsonFlag = False,
) -> None:
    """Print the chain's length and head hash, signed with the home's key: keep it outside the
    database (redirect --json to a file) and check it later with `audit verify --checkpoint`."""
    s = session(ctx, json_)
    chain = _chain(repo, global_)
    taken = checkpoints.signed(s.home, as_json(s.service.history.audit_checkpoint(s.caller, chain)))
    s.emit(
        taken,
        lambda c: output.line(
            f"checkpoint of {c['chain']}: {c['length']} events, head {c['head_hash']} "
            f"({c['signature']}); save it with --json"
        ),
    )


def _show_verdict(v: dict[str, Any]) -> None:
    if v["ok"]:
        extends = (
            f", extends the checkpoint at {v['checkpoint']['length']}" if "checkpoint" in v else ""
        )
        output.line(f"audit chain of {v['chain']} intact: {v['events_checked']} events{extends}")
    else:
        output.line(
            f"audit chain of {v['chain']} BROKEN at event {v['first_broken_event_id']} "
            f"({v['reason']}); {v['events_checked']} events before it verified"
        )


@audit_app.command("export")
def audit_export(
    ctx: typer.Context,
    repo: Repo,
    format_: Annotated[
        str, typer.Option("--format", metavar="csv|json", help="CSV (payload as JSON) or JSON.")
    ] = "csv",
    out: Annotated[
        Path | None,
        typer.Option("--output", "-o", metavar="FILE", help="Write here (default: stdout)."),
    ] = None,
    since: Since = None,
    until: Until = None,
    element: AboutElement = None,
    actor: ByActor = None,
    json_: JsonFlag = False,
) -> None:
    """The repository's audit events as a file for an auditor, oldest first: CSV (cells made
    safe for spreadsheets) or JSON — the console's export. At most 10,000 events; narrow with
    --since / --until when there are more (a note on stderr says so). With -o FILE, --json
    prints {path, format, events}."""
    s = session(ctx, json_)
    if format_ not in EXPORT_FORMATS:
        raise InvalidArgument(f"--format must be csv or json, not {format_!r}", field="format")
    if s.json and out is None and format_ == "csv":
        raise InvalidArgument("--json prints one JSON document: add --format json, or -o FILE")
    from service.audit.history import MAX_HISTORY  # the largest page the service answers

    rows = as_json(
        s.service.history.history(
            s.caller,
            repo,
            since=parse_instant(since, "--since"),
            until=parse_instant(until, "--until"),
            element_id=element,
            actor=actor,
            limit=MAX_HISTORY,
        )
    )
    text = events_csv(rows) if format_ == "csv" else events_json(rows)
    if out is None:
        sys.stdout.write(text)
    else:
        try:
            out.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise InvalidArgument(f"cannot write {out}: {exc.strerror}", field="output") from None
        written = {"path": str(out), "format": format_, "events": len(rows)}
        s.emit(written, lambda w: output.note(f"wrote {w['events']} events to {w['path']}"))
    if len(rows) == MAX_HISTORY:
        output.note(f"stopped at {MAX_HISTORY} events: narrow with --since / --until for the rest")
