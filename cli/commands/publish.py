"""Publishing: baselines, promotion, roll back, the published pointer."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cli import output
from cli.inputs import parse_instant, read_pins
from cli.options import AsOf, JsonFlag, Reason, Repo
from cli.session import session

PANEL = "Publishing"

baseline_app = typer.Typer(help="Immutable sets of pinned versions.", no_args_is_help=True)

BaselineId = Annotated[str, typer.Argument(metavar="BASELINE_ID", help="The baseline (bl_…).")]


def register(app: typer.Typer) -> None:
    """Attach this group's commands to the root app."""
    app.add_typer(baseline_app, name="baseline", rich_help_panel=PANEL)
    app.command("promote", rich_help_panel=PANEL)(promote)
    app.command("rollback", rich_help_panel=PANEL)(rollback)
    app.command("published", rich_help_panel=PANEL)(published)


@baseline_app.command("create")
def baseline_create(
    ctx: typer.Context,
    repo: Repo,
    name: Annotated[
        str | None, typer.Option("--name", help="A name (default: a timestamp).")
    ] = None,
    pins_file: Annotated[
        str | None,
        typer.Option(
            "--pins-file",
            metavar="FILE",
            help='JSON {"el_…": "ver_…"} of explicit pins (default: every canonical, '
            "non-retired element at its head).",
        ),
    ] = None,
    json_: JsonFlag = False,
) -> None:
    """Cut a baseline (publisher). It is not published until promoted."""
    s = session(ctx, json_)
    s.emit(
        s.service.publishing.create_baseline(
            s.caller, repo, name, read_pins(pins_file) if pins_file else None
        ),
        lambda b: output.line(
            f"created baseline {b['baseline_id']} {b['name']!r} pinning {len(b['pins'])} "
            f"element(s) in {b['repository_id']}"
        ),
    )


@baseline_app.command("show")
def baseline_show(ctx: typer.Context, baseline_id: BaselineId, json_: JsonFlag = False) -> None:
    """A baseline with its pins (only those you may read) and whether it is published."""
    s = session(ctx, json_)
    s.emit(s.service.publishing.baseline_show(s.caller, baseline_id), _show_baseline)


def _show_baseline(b: dict[str, Any]) -> None:
    output.heading(f"baseline {b['baseline_id']} {b['name']!r}")
    output.fields(
        [
            ("repository", b["repository_id"]),
            ("created", f"{b['created_at']} by {b['created_by']}"),
            ("parent", b["parent_baseline_id"]),
            ("published", b.get("published")),
        ]
    )
    output.table(b["pins"], [("element_id", "element"), ("version_id", "version")], empty="no pins")


@baseline_app.command("list")
def baseline_list(ctx: typer.Context, repo: Repo, json_: JsonFlag = False) -> None:
    """Baselines of a repository, newest first."""
    s = session(ctx, json_)
    s.emit(
        s.service.publishing.list_baselines(s.caller, repo),
        lambda rows: output.table(
            rows,
            [
                ("baseline_id", "baseline"),
                ("name", "name"),
                ("created_at", "created at"),
                ("created_by", "by"),
                ("published", "published"),
            ],
            empty=f"no baselines in {repo}",
        ),
    )


@baseline_app.command("diff")
def baseline_diff(
    ctx: typer.Context,
    baseline_a: Annotated[str, typer.Argument(metavar="BASELINE_A", help="From (older).")],
    baseline_b: Annotated[str, typer.Argument(metavar="BASELINE_B", help="To (newer).")],
    json_: JsonFlag = False,
) -> None:
    """Versions added, changed and removed from A to B, with body diffs."""
    s = session(ctx, json_)
    s.emit(s.service.publishing.baseline_diff(s.caller, baseline_a, baseline_b), _show_diff)


def _show_diff(d: dict[str, Any]) -> None:
    output.heading(
        f"{d['from_baseline_id']} -> {d['to_baseline_id']}: {len(d['added'])} added, "
        f"{len(d['changed'])} changed, {len(d['removed'])} removed"
    )
    for change in ("added", "changed", "removed"):
        for e in d[change]:
            output.line(
                f"{change} {e['element_id']} {e['title']!r}: "
                f"{output.show(e['from']['version_id'])} -> {output.show(e['to']['version_id'])}"
            )
            output.block(e["diff"])


def promote(
    ctx: typer.Context,
    baseline_id: BaselineId,
    repo: Repo,
    reason: Reason = None,
    expected: Annotated[
        str | None,
        typer.Option(
            "--expected-baseline",
            metavar="BASELINE_ID",
            help="Promote only if this baseline is still the published one (compare-and-swap); "
            "otherwise exit 6 (lost race) and change nothing.",
        ),
    ] = None,
    json_: JsonFlag = False,
) -> None:
    """Move the repository's published pointer to a baseline (publisher)."""
    s = session(ctx, json_)
    s.emit(
        s.service.publishing.promote(
            s.caller, baseline_id, repo, reason, expected_baseline_id=expected
        ),
        _show_move,
    )


def rollback(
    ctx: typer.Context,
    repo: Repo,
    to: Annotated[
        str | None,
        typer.Option(
            "--to",
            metavar="BASELINE_ID",
            help="Baseline to return to (default: the one published before the current one).",
        ),
    ] = None,
    reason: Reason = None,
    json_: JsonFlag = False,
) -> None:
    """Publish an older baseline again (publisher); recorded as a move like any promotion."""
    s = session(ctx, json_)
    s.emit(s.service.publishing.rollback(s.caller, repo, to, reason), _show_move)


def _show_move(m: dict[str, Any]) -> None:
    output.line(
        f"published {m['repository_id']}: {output.show(m['from'])} -> {m['to']} "
        f"at {m['at']} by {m['by']} (decision {m['decision_element_id']})"
    )


def published(ctx: typer.Context, repo: Repo, as_of: AsOf = None, json_: JsonFlag = False) -> None:
    """The published baseline now (or as of an instant) and the pointer's moves up to then."""
    s = session(ctx, json_)
    s.emit(
        s.service.publishing.published(s.caller, repo, parse_instant(as_of, "--as-of")),
        _show_published,
    )


def _show_published(p: dict[str, Any]) -> None:
    when = f"as of {p['as_of']}" if p["as_of"] else "now"
    output.heading(
        f"published baseline of {p['repository_id']} {when}: {output.show(p['baseline_id'])}"
    )
    output.table(
        p["moves"],
        [("at", "moved at"), ("from", "from"), ("to", "to"), ("by", "by"), ("reason", "reason")],
        empty="never promoted",
    )
