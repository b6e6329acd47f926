"""``ameide test``: the smoke — docs/product.md §9 end to end, stopping at the first broken step.

A thin adapter over ``smoke.run.run_smoke``: parse the options, run, print each step as it
finishes (or one JSON report), exit 11 naming the broken step. Registered by
``cli.main`` (``register(app)``).
"""

from __future__ import annotations

import os
from typing import Annotated, Any

import typer

from cli import output
from cli.entry import started
from cli.errors import EXIT_SMOKE_FAILED
from cli.options import JsonFlag
from cli.session import session
from domain.errors import InvalidArgument

PANEL = "Operations"

HELP = (
    "Run the reference scenario (docs/product.md §9) end to end; exit 11 naming the first broken "
    "step.\n\n"
    "Phase 0 checks the configured home (--home, AMEIDE_HOME, --database-url) when it exists: "
    "the configuration loads, the database is at the migrations' head, the keyword index is on "
    "disk and caught up, and the generated gRPC code is what proto/ generates. Nothing is "
    "written to its database.\n\n"
    "Phase 1 creates an embedded instance in a temporary directory (deleted afterwards unless "
    "--keep) and runs the scenario in-process: the sample backlog is ingested as evidence; a "
    "canonical Testing SOP is published; an agent's published read has the SOP first, with "
    "citations whose offsets slice the shown text exactly and evidence below; the agent's "
    "proposal goes stale when a competing change is accepted first, accepting it is refused "
    "(STALE_PROPOSAL), it is rebased and accepted; after a second promotion the published read "
    "returns the new version and an as-of read the old one; a principal without a grant gets "
    "the same NOT_FOUND as for a missing repository, for reads and proposals; verify_citations "
    "rejects a citation of another version and an invented one.\n\n"
    "Phase 2 runs the same scenario against the real server (REST + MCP and gRPC, tokens "
    "required) started on free loopback ports over that instance: curation and publishing "
    "through gRPC, the agent through MCP with the official SDK client, every read and refusal "
    "checked through both.\n\n"
    "With --target, phase 2 runs against a running server instead. Limits: the token must be a "
    "global admin's (it creates the repository smoke/eng/run-TIMESTAMP-XXXX, which stays, "
    "grants roles to the smoke's principals and mints their tokens, revoked at the end); "
    "ingest is skipped (no network surface ingests), so no evidence is checked there; gRPC "
    "is plaintext; the server's MCP endpoint must accept the target's Host header (loopback, "
    "or AMEIDE_MCP_ALLOWED_HOSTS on the server).\n\n"
    "Each step prints ok, skip (with why) or FAIL with a one-line reason, and the run stops at "
    "the first failure. Exit codes: 0 passed; 11 a step failed, named on stderr as "
    "'error: SMOKE_FAILED: STEP: reason'; 2 bad options. --json prints one report: "
    "{ok, failed_step, reason, steps: [{name, phase, status, detail, seconds}], ...}."
)


def register(app: typer.Typer) -> None:
    """Attach ``ameide test`` to the root app."""
    app.command("test", help=HELP, rich_help_panel=PANEL)(smoke)


def smoke(
    ctx: typer.Context,
    phase: Annotated[
        list[int] | None,
        typer.Option(
            "--phase",
            metavar="N",
            help="Run only this phase (repeatable): 0 = the configured installation, 1 = the "
            "scenario in-process, 2 = the scenario over gRPC and MCP. Default: all three.",
            show_default=False,
        ),
    ] = None,
    target: Annotated[
        str | None,
        typer.Option(
            "--target",
            metavar="URL",
            help="Run phase 2 against this running `ameide serve` (its HTTP base URL, e.g. "
            "http://127.0.0.1:8080) instead of a server the smoke starts. Needs --token.",
            show_default=False,
        ),
    ] = None,
    grpc_target: Annotated[
        str | None,
        typer.Option(
            "--grpc-target",
            metavar="HOST:PORT",
            help="The target's gRPC address (plaintext); default: the --target host, port "
            "AMEIDE_GRPC_PORT (50051 when unset), as `ameide serve` listens.",
            show_default=False,
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar="AMEIDE_TOKEN",
            metavar="TOKEN",
            help="With --target: a bearer token of a global admin on that server (ameide token "
            "create). Prefer the AMEIDE_TOKEN environment variable.",
            show_default=False,
        ),
    ] = None,
    keep: Annotated[
        bool,
        typer.Option(
            "--keep", help="Keep the embedded instance's directory (printed) for inspection."
        ),
    ] = False,
    json_: JsonFlag = False,
) -> None:
    """Run the reference scenario (docs/product.md §9) end to end (help: ``HELP``)."""
    from smoke.run import SmokeOptions, run_smoke  # the smoke's stack loads only for this command

    s = session(ctx, json_)
    options = SmokeOptions(
        settings=s.settings,
        phases=tuple(sorted(set(phase))) if phase else (0, 1, 2),
        target=target,
        grpc_target=grpc_target,
        grpc_port=_grpc_port(),
        token=token,
        keep=keep,
    )
    started()  # a long run: the garbage collector resumes (cli.entry)
    report = run_smoke(options, on_result=None if s.json else _show_step)
    if s.json:
        output.print_json(report.to_dict())
    else:
        _show_summary(report.to_dict())
    failed = report.failed
    if failed is not None:
        output.error("SMOKE_FAILED", f"{failed.name}: {failed.detail}", as_json=False)
        raise typer.Exit(EXIT_SMOKE_FAILED)


def _show_step(result: Any) -> None:
    mark = {"ok": "ok  ", "skip": "skip", "fail": "FAIL"}[result.status]
    output.line(f"{mark}  {result.name}  ({result.seconds:.2f}s)  {result.detail}")


def _show_summary(report: dict[str, Any]) -> None:
    steps = report["steps"]
    counts = {status: sum(1 for s in steps if s["status"] == status) for status in ("ok", "skip")}
    verdict = "passed" if report["ok"] else f"FAILED at {report['failed_step']}"
    output.line(
        f"smoke {verdict}: {counts['ok']} steps ok, {counts['skip']} skipped "
        f"in {report['seconds']:.1f}s"
    )
    if report.get("kept"):
        output.line(f"embedded instance kept in {report['kept']}")


def _grpc_port() -> int:
    """The gRPC port ``ameide serve`` uses here (``AMEIDE_GRPC_PORT``, else 50051)."""
    from smoke.run import DEFAULT_GRPC_PORT

    raw = os.environ.get("AMEIDE_GRPC_PORT", "").strip()
    if not raw:
        return DEFAULT_GRPC_PORT
    if not raw.isdigit() or not 0 < int(raw) < 65536:
        raise InvalidArgument(f"AMEIDE_GRPC_PORT must be a port number, not {raw!r}")
    return int(raw)
