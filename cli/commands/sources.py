"""Registered sources: git repositories ``ameide serve`` pulls on a schedule and on webhooks.

``source add`` registers one (admin of the repository); ``list``, ``status`` and ``run`` (sync
now, in this process) are for its admins and ingestors; ``pause``, ``resume`` and ``remove`` for
its admins. Credentials and webhook secrets are given by reference and never printed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from cli import output
from cli.commands.ingest import RoutingFile, _routing_rules
from cli.options import JsonFlag, Repo
from cli.session import session
from domain.errors import FailedPrecondition

PANEL = "Ingest"

source_app = typer.Typer(
    help="Registered sources: git repositories pulled on a schedule and on webhooks.",
    no_args_is_help=True,
)
SourceId = Annotated[
    str, typer.Argument(metavar="SOURCE_ID", help="The source's id (src_…; see source list).")
]


def register(app: typer.Typer) -> None:
    """Attach this group's commands to the root app."""
    app.add_typer(source_app, name="source", rich_help_panel=PANEL)


def _opt(name: str, text: str, metavar: str | None = None) -> Any:
    return typer.Option(name, help=text, metavar=metavar, show_default=False)


@source_app.command("add")
def source_add(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="NAME", help="A name for it in --repo.")],
    repo: Repo,
    url: Annotated[
        str | None, _opt("--url", "A git URL to clone (no credentials in it).", "URL")
    ] = None,
    path: Annotated[
        Path | None, _opt("--path", "A local git repository instead of --url.", "DIR")
    ] = None,
    ref: Annotated[str, typer.Option("--ref", help="Branch, tag or commit to mirror.")] = "main",
    glob: Annotated[
        str, typer.Option("--glob", help="Which files, relative to the repository root.")
    ] = "**/*.md",
    routing: RoutingFile = None,
    interval: Annotated[
        int, typer.Option("--interval", help="Seconds between scheduled runs (±10% jitter).")
    ] = 3600,
    credential_env: Annotated[
        str | None,
        _opt("--credential-env", "Environment variable holding the URL's token.", "NAME"),
    ] = None,
    credential_file: Annotated[
        str | None, _opt("--credential-file", "File holding the URL's token.", "FILE")
    ] = None,
    hook_secret_env: Annotated[
        str | None,
        _opt("--hook-secret-env", "Environment variable holding the webhook secret.", "NAME"),
    ] = None,
    hook_secret_file: Annotated[
        str | None,
        _opt(
            "--hook-secret-file",
            "File holding the webhook secret (default: one is generated and shown once).",
            "FILE",
        ),
    ] = None,
    json_: JsonFlag = False,
) -> None:
    """Register a git repository pulled into --repo on its --interval and on webhooks (admin)."""
    s = session(ctx, json_)
    rules, rules_name = _routing_rules(routing)
    added = s.service.sources.add_source(
        s.caller,
        repo,
        name,
        url=url,
        path=str(path) if path is not None else None,
        ref=ref,
        glob=glob,
        routing=rules,
        routing_name=rules_name,
        interval_s=interval,
        credential_env=credential_env,
        credential_file=credential_file,
        hook_secret_env=hook_secret_env,
        hook_secret_file=hook_secret_file,
    )
    s.emit(added.model_dump(), _show_added)


def _show_added(r: dict[str, Any]) -> None:
    _show_source(r)
    if r["hook_secret"]:
        output.line(f"webhook secret (shown once): {r['hook_secret']}")


def _show_source(r: dict[str, Any]) -> None:
    output.heading(f"{r['source_id']}  {r['repository']} / {r['name']}")
    output.fields(
        [
            ("location", r["location"]),
            ("ref", r["ref"]),
            ("glob", r["glob"]),
            ("routing", r["routing"]),
            ("interval", f"{r['interval_s']} s"),
            ("paused", "yes" if r["paused"] else "no"),
            ("credential", r["credential"]),
            ("webhook", f"POST {r['hook_path']} (secret: {r['hook_secret_ref']})"),
            ("runs as", r["run_as"]),
            ("next run", r["next_run_at"]),
            ("failures", r["failures"] or None),
            ("running on", r["leased_by"]),
        ]
    )


@source_app.command("list")
def source_list(ctx: typer.Context, repo: Repo, json_: JsonFlag = False) -> None:
    """The sources registered for --repo (admins and ingestors)."""
    s = session(ctx, json_)
    s.emit(s.service.sources.list_sources(s.caller, repo).model_dump(), _show_list)


def _show_list(r: dict[str, Any]) -> None:
    rows = [{**x, "state": "paused" if x["paused"] else "active"} for x in r["sources"]]
    output.table(
        rows,
        [
            ("source_id", "id"),
            ("name", "name"),
            ("location", "location"),
            ("ref", "ref"),
            ("interval_s", "interval s"),
            ("state", "state"),
            ("next_run_at", "next run"),
        ],
        empty=f"no sources registered for {r['repository']}",
    )


@source_app.command("pause")
def source_pause(ctx: typer.Context, source_id: SourceId, json_: JsonFlag = False) -> None:
    """Stop scheduled and webhook runs of a source (admin)."""
    s = session(ctx, json_)
    s.emit(s.service.sources.pause_source(s.caller, source_id).model_dump(), _show_source)


@source_app.command("resume")
def source_resume(ctx: typer.Context, source_id: SourceId, json_: JsonFlag = False) -> None:
    """Schedule a paused source again, its next run now (admin)."""
    s = session(ctx, json_)
    s.emit(s.service.sources.resume_source(s.caller, source_id).model_dump(), _show_source)


@source_app.command("remove")
def source_remove(ctx: typer.Context, source_id: SourceId, json_: JsonFlag = False) -> None:
    """Unregister a source and its run records (admin); what it ingested stays."""
    s = session(ctx, json_)
    s.emit(
        s.service.sources.remove_source(s.caller, source_id).model_dump(),
        lambda r: output.line(f"removed {r['source_id']} ({r['repository']} / {r['name']})"),
    )


@source_app.command("status")
def source_status(
    ctx: typer.Context,
    source_id: SourceId,
    limit: Annotated[int, typer.Option("--limit", help="How many recent runs to show.")] = 10,
    json_: JsonFlag = False,
) -> None:
    """A source's last run, next run, last error and its recent runs with their reports."""
    s = session(ctx, json_)
    s.emit(s.service.sources.source_status(s.caller, source_id, limit).model_dump(), _show_status)


def _show_status(r: dict[str, Any]) -> None:
    _show_source(r["source"])
    last = r["last_run"]
    output.fields(
        [
            ("last run", f"{last['started_at']} ({last['status']})" if last else None),
            ("last error", r["last_error"]),
        ]
    )
    rows = [{**run, "counts": _counts(run["report"])} for run in r["runs"]]
    output.table(
        rows,
        [
            ("run_id", "run"),
            ("trigger", "trigger"),
            ("started_at", "started"),
            ("finished_at", "finished"),
            ("status", "status"),
            ("counts", "counts"),
            ("error", "error"),
        ],
        empty="no runs yet",
    )


def _counts(report: dict[str, Any] | None) -> str:
    counts = (report or {}).get("counts") or {}
    return ", ".join(f"{name} {n}" for name, n in counts.items() if n)


@source_app.command("run")
def source_run(ctx: typer.Context, source_id: SourceId, json_: JsonFlag = False) -> None:
    """Pull and ingest a source now, in this process, as you (admin or ingestor).

    A run that fails is a FAILED_PRECONDITION error naming the run (see source status)."""
    s = session(ctx, json_)
    run = s.service.sources.run_source(s.caller, source_id)
    if run.status == "failed":
        raise FailedPrecondition(
            f"run {run.run_id} of {source_id} failed: {run.error}",
            source_id=source_id,
            run_id=run.run_id,
        )
    s.emit(run.model_dump(), _show_run)


def _show_run(r: dict[str, Any]) -> None:
    output.heading(f"run {r['run_id']} of {r['source_id']}: {r['status']}")
    output.fields(
        [
            ("started", r["started_at"]),
            ("finished", r["finished_at"]),
            ("counts", _counts(r["report"]) or None),
            ("error", r["error"]),
        ]
    )
