"""The derived indexes: status (their lag), rebuild (from the database), and embed (semantic
recall's vectors)."""

from __future__ import annotations

import sys
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
    """Show the index's lag (outbox rows not applied yet, how far behind, the oldest's age),
    then apply what was pending (global admin).

    Writes return before the index applies them (a background thread does, in batches); a
    read applies what it needs first, so it always sees the writes that returned before it.

    An index found missing on disk, opened empty over a database with content, or of an older
    format is rebuilt from the database first (the index is derived state).
    """
    s = session(ctx, json_)
    s.emit(s.service.index.index_status(s.caller), _show_status)


@index_app.command("rebuild")
def index_rebuild(ctx: typer.Context, json_: JsonFlag = False) -> None:
    """Recompute the whole index and the chunk rows from the database (global admin)."""
    s = session(ctx, json_)
    s.emit(s.service.index.index_rebuild(s.caller), _show_rebuild)


@index_app.command("embed")
def index_embed(ctx: typer.Context, json_: JsonFlag = False) -> None:
    """Embed every version that has no vectors yet, now, showing progress (global admin; not
    with AMEIDE_SEMANTIC=off).

    Semantic recall's vectors are derived state built in the background after writes, so an
    ingest never waits for them; a short-lived CLI process may exit before they are done. Reads
    rank versions without vectors by keywords alone. This command finishes the job.
    """
    s = session(ctx, json_)
    with output.progress_bar(not s.json and sys.stderr.isatty()) as bar:
        progress = None if bar is None else lambda done, total: bar("embedding", done, total)
        result = s.service.index.embedding_build(s.caller, progress)
    s.emit(result, _show_embed)


def _show_status(st: dict[str, Any]) -> None:
    state = "consistent" if st["consistent"] else "NOT consistent (run `ameide index rebuild`)"
    engine = f" ({st['engine']})" if st.get("engine") else ""
    output.line(
        f"index{engine} {state}: {st['indexed_versions']} of {st['expected_versions']} versions, "
        f"{st['indexed_chunks']} chunks; {st['pending_before']} pending before this call, "
        f"{st['applied']} applied now, {st['pending']} pending"
    )
    lag = st.get("lag_before") or {}
    if lag.get("entries"):
        output.line(
            f"lag before this call: {lag['entries']} outbox rows not applied, the watermark "
            f"{lag['positions']} positions behind the outbox, the oldest waiting "
            f"{lag['oldest_age_seconds']} s (writes are applied in the background)"
        )
    semantic = st.get("semantic")
    if semantic:
        show_embedding_progress(semantic)
    else:
        output.line("embeddings: semantic recall is off (AMEIDE_SEMANTIC=off); reads use keywords")


def show_embedding_progress(semantic: dict[str, Any]) -> None:
    """How much of the content has vectors (``index status``, ``ingest``), and, when a one-shot
    command leaves some without, that it does not embed them in the background."""
    texts = semantic["stored_chunk_rows"]  # counted once the keyword index has chunked them
    of_texts = f" of {texts}" if texts and texts >= (semantic["indexed_chunks"] or 0) else ""
    output.line(
        f"embeddings ({semantic['model']}): {semantic['indexed_versions']} of "
        f"{semantic['expected_versions']} versions embedded ({semantic['indexed_chunks']}"
        f"{of_texts} texts); {semantic['pending']} outbox rows pending"
        + (" (building in the background)" if semantic["building"] else "")
    )
    if semantic["indexed_versions"] != semantic["expected_versions"] and not semantic["building"]:
        output.line(
            "this command does not embed in the background (it exits): run `ameide index embed` "
            "to embed now, with progress (a server embeds after writes); until then reads rank "
            "versions without vectors by keywords alone",
            style="dim",
        )


def _show_embed(st: dict[str, Any]) -> None:
    output.line(f"embedded now: {st['applied']} outbox rows applied")
    show_embedding_progress(st)


def _show_rebuild(st: dict[str, Any]) -> None:
    output.line(
        f"rebuilt the {st.get('engine') or 'keyword'} index: {st['versions']} versions, "
        f"{st['chunks']} chunks; "
        f"{'consistent' if st['consistent'] else 'NOT consistent'}"
    )
