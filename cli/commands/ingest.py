"""Ingest: mirror markdown backlogs from git as evidence, and explain the routing rules."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from cli import output
from cli.commands.index import show_embedding_progress
from cli.inputs import read_bytes, read_text_file
from cli.options import JsonFlag, Repo
from cli.session import session

PANEL = "Ingest"

ingest_app = typer.Typer(
    help="Mirror markdown backlogs (git repositories) in as evidence.", no_args_is_help=True
)
routing_app = typer.Typer(help="Routing rules of ingest (routing.yaml).", no_args_is_help=True)

RoutingFile = Annotated[
    Path | None,
    typer.Option(
        "--routing",
        metavar="FILE",
        help="Routing rules (YAML; see examples/routing.yaml). Unmatched files go to --repo.",
        show_default=False,
    ),
]
DEFAULT_ROUTING_NAME = "routing.yaml"
_PHASES = {"reading": "reading files", "writing": "writing elements", "linking": "linking"}


def register(app: typer.Typer) -> None:
    """Attach this group's commands to the root app."""
    app.add_typer(ingest_app, name="ingest", rich_help_panel=PANEL)
    app.add_typer(routing_app, name="routing", rich_help_panel=PANEL)


@ingest_app.command("backlog")
def ingest_backlog(
    ctx: typer.Context,
    source: Annotated[
        str, typer.Argument(metavar="SOURCE", help="A local git repository or a git URL.")
    ],
    repo: Repo,
    glob: Annotated[
        str, typer.Option("--glob", help="Which files, relative to the repository root.")
    ] = "**/*.md",
    ref: Annotated[
        str, typer.Option("--ref", help="Branch, tag or commit to mirror (its state, not HEAD).")
    ] = "main",
    routing: RoutingFile = None,
    full_scan: Annotated[
        bool,
        typer.Option(
            "--full-scan",
            help="Read every file instead of the diff since the last run; also retires elements "
            "of files that disappeared meanwhile.",
        ),
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Plan and print the report without writing anything."),
    ] = False,
    allow_mass_retire: Annotated[
        bool,
        typer.Option(
            "--allow-mass-retire",
            help="Allow a run that retires more than 20% of the mirror (at least 5 files).",
        ),
    ] = False,
    json_: JsonFlag = False,
) -> None:
    """Mirror the markdown files of SOURCE at --ref into --repo (ingestor); prints the run report.

    Re-running at the same commit writes nothing; a later commit reads only the diff. A run
    that would retire more than 20% of the mirror is refused unless --allow-mass-retire (a
    mistyped --glob or --ref does that); --dry-run shows what a run would do.
    """
    s = session(ctx, json_)
    rules, rules_name = _routing_rules(routing)
    with output.progress_bar(not s.json and sys.stdout.isatty(), _PHASES) as progress:
        report = s.service.ingest.ingest_backlog(
            s.caller,
            source,
            repo,
            glob=glob,
            ref=ref,
            routing=rules,
            routing_name=rules_name,
            progress=progress,
            cache_dir=s.home / "sources",
            full_scan=full_scan,
            dry_run=dry_run,
            allow_mass_retire=allow_mass_retire,
        )
    s.emit(report, _show_report)
    if s.app.semantic is not None and not dry_run and not s.json:
        show_embedding_progress(s.app.semantic.status())


def _show_report(r: dict[str, Any]) -> None:
    commit = (r["to_commit"] or "")[:12]
    if r["noop"]:
        output.line(
            f"nothing to do: {r['repository']} already mirrors {r['source_repo']} @ {commit}"
        )
        return
    since = f"diff since {r['from_commit'][:12]}" if r["from_commit"] else "full scan"
    if r.get("dry_run"):
        since += "; DRY RUN: nothing was written, outcomes as planned"
    verb = "would ingest" if r.get("dry_run") else "ingested"
    output.heading(
        f"{verb} {r['source_repo']} @ {r['ref']} ({commit}) into {r['repository']} ({since})"
    )
    output.table(
        [{"outcome": name, "files": count} for name, count in r["counts"].items()],
        [("outcome", "outcome"), ("files", "files")],
        empty="no files",
    )
    links, pii = r["links"], r["pii"]
    output.fields(
        [
            ("links", f"{links['added']} added, {links['retired']} retired, "
                      f"{links['unresolved']} unresolved"),
            ("references", f"{links['resolved']} resolved, {links['ambiguous']} ambiguous, "
                           f"{links['missing']} missing, {links['outside']} outside the "
                           "mirrored files"),
            ("supersedes", _supersedes_line(r.get("supersedes"))),
            ("redacted", _pii_line(pii["redacted_files"], pii["redacted"])),
            ("rejected", _pii_line(pii["rejected_files"], pii["rejected"])),
            ("versions", r["versions_written"]),
            ("repositories", ", ".join(r["repositories"]) or None),
            ("duration", f"{r['duration_s']:.2f} s"),
        ]
    )  # fmt: skip
    for note in r["notes"]:
        output.line(f"note: {note}", style="dim")
    if r["skipped"]:
        output.heading("skipped")
        output.table(
            r["skipped"], [("path", "path"), ("code", "code"), ("reason", "reason")], empty=""
        )


def _pii_line(files: int, counts: dict[str, int]) -> str | None:
    if not files:
        return None
    kinds = ", ".join(f"{kind} {n}" for kind, n in counts.items())
    return f"{files} file{'s' if files != 1 else ''} ({kinds})"


@ingest_app.command("status")
def ingest_status(ctx: typer.Context, repo: Repo, json_: JsonFlag = False) -> None:
    """The last run of every source mirrored into --repo."""
    s = session(ctx, json_)
    s.emit(s.service.ingest.ingest_status(s.caller, repo), _show_status)


def _show_status(r: dict[str, Any]) -> None:
    rows = [
        {**source, "commit": (source["last_commit"] or "")[:12], "counts": _counts(source)}
        for source in r["sources"]
    ]
    output.table(
        rows,
        [
            ("source_repo", "source"),
            ("commit", "commit"),
            ("last_ref", "ref"),
            ("last_run_at", "last run"),
            ("last_run_by", "by"),
            ("run_count", "runs"),
            ("counts", "last run counts"),
        ],
        empty=f"nothing ingested into {r['repository']} yet",
    )


def _counts(source: dict[str, Any]) -> str:
    report = source["last_report"] or {}
    if report and "counts" not in report:
        return "(for restricted clearance)"  # totals are shown only to callers cleared for it
    counts = report.get("counts") or {}
    return ", ".join(f"{name} {n}" for name, n in counts.items() if n)


@routing_app.command("explain")
def routing_explain(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(metavar="FILE", help="The markdown file to route.")],
    routing: RoutingFile = None,
    repo: Annotated[
        str | None,
        typer.Option(
            "--repo",
            metavar="TENANT/ORG/REPO",
            help="The command's repository (the fallback; templates resolve against it).",
            show_default=False,
        ),
    ] = None,
    path: Annotated[
        str | None,
        typer.Option(
            "--path",
            help="The file's path inside the backlog, as rules see it (default: FILE as given).",
            show_default=False,
        ),
    ] = None,
    json_: JsonFlag = False,
) -> None:
    """Show which routing rule decides FILE and why, rule by rule (nothing is stored)."""
    s = session(ctx, json_)
    data, _ = read_bytes(file, "file")
    rules, rules_name = _routing_rules(routing)
    s.emit(
        s.service.ingest.routing_explain(
            None, rules, path or file, data, repo=repo, routing_name=rules_name
        ),
        _show_explanation,
    )


def _routing_rules(file: Path | None) -> tuple[str | None, str]:
    """The rule file's text (the service parses and validates it) and its name for errors."""
    if file is None:
        return None, DEFAULT_ROUTING_NAME
    return read_text_file(file, "routing file"), str(file)


def _show_explanation(r: dict[str, Any]) -> None:
    output.heading(f"{r['path']}: {r['summary']}")
    if r["decision"]:
        d = r["decision"]
        output.fields(
            [
                ("repository", d["repository"]),
                ("classification", d["classification"]),
                ("policy", d["policy"]),
                ("tags", ", ".join(d["tags"]) or None),
            ]
        )
    for rule in r["rules"]:
        verdict = "matched" if rule["matched"] else "no match"
        override = ", override" if rule["override"] else ""
        output.line(f"{rule['rule']} (priority {rule['priority']}{override}): {verdict}")
        for reason in rule["reasons"]:
            output.line(f"    {reason}", style="dim")
    if r["skipped"]:
        output.line(f"ingest would skip it: {r['skipped']['reason']}")


def _supersedes_line(counts: dict[str, int] | None) -> str | None:
    """The run's ``SUPERSEDES`` relationships (from lifecycle statements), if any changed."""
    if not counts or not (counts["added"] or counts["retired"]):
        return None
    return f"{counts['added']} added, {counts['retired']} retired"
