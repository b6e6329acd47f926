"""The derived keyword index: status (its lag) and rebuild (from the database)."""

from __future__ import annotations

from typing import Any

import typer

from cli import output
from cli.options import JsonFlag
from cli.session import session

PANEL = "Operations"

index_app = typer.Typer(
    help="The keyword index: a derived projection of the database.", no_args_is_help=True
)


def register(app: typer.Typer) -> None:
    """Attach this group's commands to the root app."""
    app.add_typer(index_app, name="index", rich_help_panel=PANEL)


@index_app.command("status")
def index_status(ctx: typer.Context, json_: JsonFlag = False) -> None:
    """Show the index's lag (pending outbox rows), then apply what was pending (global admin).

    An index found missing on disk, opened empty over a database with content, or of an older
    format is rebuilt from the database first (the index is derived state).
    """
    s = session(ctx, json_)
    s.emit(s.service.index_status(s.caller), _show_status)


@index_app.command("rebuild")
def index_rebuild(ctx: typer.Context, json_: JsonFlag = False) -> None:
    """Recompute the whole index and the chunk rows from the database (global admin)."""
    s = session(ctx, json_)
    s.emit(s.service.index_rebuild(s.caller), _show_rebuild)


def _show_status(st: dict[str, Any]) -> None:
    state = "consistent" if st["consistent"] else "NOT consistent (run `ameide index rebuild`)"
    output.line(
        f"index {state}: {st['indexed_versions']} of {st['expected_versions']} versions, "
        f"{st['indexed_chunks']} chunks; {st['pending_before']} pending before this call, "
        f"{st['applied']} applied now, {st['pending']} pending"
    )


def _show_rebuild(st: dict[str, Any]) -> None:
    output.line(
        f"rebuilt the index: {st['versions']} versions, {st['chunks']} chunks; "
        f"{'consistent' if st['consistent'] else 'NOT consistent'}"
    )
