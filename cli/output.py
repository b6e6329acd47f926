"""Printing: one JSON document for scripts, concise rich text for people, one-line errors.

Markup is off everywhere: titles and bodies are user content and may contain ``[brackets]``.
Control characters are escaped everywhere people read (:func:`printable`): a title such as
``\x1b]0;owned\x07`` must not retitle the terminal, recolour it or rewrite what it shows. JSON
output stays exact (JSON escapes them itself).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from rich import box
from rich.console import Console, OverflowMethod
from rich.table import Table
from rich.text import Text

from domain.values import lone_surrogate_at, replace_lone_surrogates
from edge.errors import error_body, one_line

NONE = "-"

_CONTROL = "\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
"""C0 but tab and newline, DEL, C1 (ESC, CSI, OSC…), bidirectional overrides and isolates,
and lone surrogates (which cannot even be encoded)."""
_IN_TEXT = re.compile(f"[{_CONTROL}]")
_IN_LINE = re.compile(f"[{_CONTROL}\t\n\u2028\u2029]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def printable(text: str, *, multiline: bool = False) -> str:
    """``text`` safe to show on a terminal: every control character spelled as an escape
    (``\x1b``, ``\x07``, ``\u202e``), so stored text can neither drive the terminal nor fake
    output. ``multiline`` keeps newlines and tabs (bodies, diffs); a line or a cell keeps none.
    Every human output goes through here; ``--json`` output does not."""
    return (_IN_TEXT if multiline else _IN_LINE).sub(_escaped, text)


class _Console(Console):
    """Rich's console, but a reader that stops reading is not a failure: the broken pipe goes
    up as ``BrokenPipeError``, which the CLI ends with success (rich itself exits 1)."""

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError


def _console() -> Console:
    """A console bound to the current stdout (test runners swap it); wide when piped, so ids
    and timestamps are never folded in logs."""
    width = None if sys.stdout.isatty() else int(os.environ.get("COLUMNS") or 200)
    return _Console(file=sys.stdout, highlight=False, markup=False, emoji=False, width=width)


def print_json(document: Any) -> None:
    """Exactly one JSON document on stdout (a lone surrogate, which no input may hold any more,
    would be printed as U+FFFD rather than end the command with a traceback). Keys sorted: the
    same answer prints byte for byte the same whether it came from the local service or over
    REST (``--server``), whose response models order fields their own way."""
    text = json.dumps(document, indent=2, ensure_ascii=False, default=str, sort_keys=True)
    if lone_surrogate_at(text, "") is not None:
        text = replace_lone_surrogates(text)
    sys.stdout.write(text + "\n")


def error(
    code: str, message: str, details: Mapping[str, Any] | None = None, *, as_json: bool
) -> None:
    """Report a failure: one line on stderr and, for scripts, ``{"error": …}`` on stdout."""
    sys.stderr.write(f"error: {code}: {printable(one_line(message))}\n")
    sys.stderr.flush()
    if as_json:
        print_json(error_body(code, message, details))


def show(value: Any) -> str:
    """A scalar for people: ``-`` for nothing."""
    if value is None or value == "":
        return NONE
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Mapping | list):
        return printable(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str))
    return printable(str(value))


def line(*parts: Any, style: str | None = None) -> None:
    """Print one line made of ``parts`` joined by spaces."""
    text = printable(" ".join(str(p) for p in parts if p is not None))
    _console().print(Text(text, style=style or ""))


def heading(text: str) -> None:
    """A bold line."""
    line(text, style="bold")


def fields(rows: Iterable[tuple[str, Any]], indent: int = 2) -> None:
    """Aligned ``label  value`` lines."""
    rows = list(rows)
    width = max((len(label) for label, _ in rows), default=0)
    for label, value in rows:
        line(" " * indent + label.ljust(width) + "  " + show(value))


def block(text: str | None, title: str | None = None) -> None:
    """A body or diff, verbatim but for control characters, under an optional rule."""
    console = _console()
    if title:
        console.print(Text(printable(f"--- {title}"), style="dim"))
    if text:
        console.print(Text(printable(text.rstrip("\n"), multiline=True)), soft_wrap=True)


FLEXIBLE = frozenset({"summary", "title", "subject", "reason", "purpose", "name", "query"})
"""Columns of free text: in a narrow terminal they are shortened (with …) so the others fit."""
MIN_FLEXIBLE = 12
GAP = 3  # characters between two columns of the table style used


def table(
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[tuple[str, str]],
    *,
    empty: str,
) -> None:
    """A compact table of ``rows`` with ``(key, header)`` columns; ``empty`` when there are none.

    A key may be dotted (``proposed_by.actor_id``) to reach into nested objects. Ids, states and
    instants are never cut, in any width or when piped (a copied id must work): only free-text
    columns (:data:`FLEXIBLE`) shrink, and when even the rest does not fit, each row is printed
    as a block of ``header  value`` lines instead.
    """
    if not rows:
        line(empty, style="dim")
        return
    cells = [[show(pick(row, key)) for key, _ in columns] for row in rows]
    widths = [
        max(len(header), *(len(c[i]) for c in cells)) for i, (_, header) in enumerate(columns)
    ]
    flexible = [key.rsplit(".", 1)[-1] in FLEXIBLE for key, _ in columns]
    console = _console()
    fixed = sum(w for w, flex in zip(widths, flexible, strict=True) if not flex)
    room = console.width - fixed - GAP * (len(columns) - 1)  # what free text may take
    free = sum(flexible)
    if (free and room < free * MIN_FLEXIBLE) or (not free and room < 0):
        _records(cells, [header for _, header in columns])
        return
    share = room // free if free else 0
    tbl = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold")
    for (_, header), width, flex in zip(columns, widths, flexible, strict=True):
        if flex:
            width = min(width, share)
        overflow: OverflowMethod = "ellipsis" if flex else "fold"
        tbl.add_column(header, no_wrap=True, overflow=overflow, min_width=width, max_width=width)
    for row_cells in cells:
        tbl.add_row(*row_cells)
    console.print(tbl)


def is_terminal() -> bool:
    """Whether stdout is a terminal (a person reads it) rather than a pipe or a file."""
    return sys.stdout.isatty()


def tsv(rows: Sequence[Mapping[str, Any]], keys: Sequence[str]) -> None:
    """One line per row, its ``keys``' values separated by tabs, never cut nor wrapped (for
    ``cut``, ``awk`` and ``while read``); a tab or newline inside a value is escaped."""
    for row in rows:
        sys.stdout.write("\t".join(show(pick(row, key)) for key in keys) + "\n")
    sys.stdout.flush()


def note(text: str) -> None:
    """A line for the person at the terminal, on stderr (stdout stays data)."""
    sys.stderr.write(printable(text) + "\n")
    sys.stderr.flush()


def _records(cells: Sequence[Sequence[str]], headers: Sequence[str]) -> None:
    """Rows as blocks of aligned ``header  value`` lines (a table too wide for the terminal)."""
    for n, row_cells in enumerate(cells):
        if n:
            line("")
        fields(zip(headers, row_cells, strict=True), indent=0)


def pick(row: Mapping[str, Any], key: str) -> Any:
    """``row[a][b]`` for ``a.b``; None when any step is missing."""
    value: Any = row
    for part in key.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


@contextmanager
def progress_bar(
    enabled: bool, labels: Mapping[str, str] | None = None
) -> Iterator[Callable[[str, int, int], None] | None]:
    """A rich progress bar fed by a service's ``progress(phase, done, total)`` callback, one
    bar per phase (``labels`` name them); ``None`` when disabled (JSON, not a terminal)."""
    if not enabled:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(
        TextColumn("{task.description:<16}"), BarColumn(), MofNCompleteColumn(), transient=True
    ) as bar:
        tasks: dict[str, Any] = {}

        def update(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = bar.add_task((labels or {}).get(phase, phase), total=total)
            bar.update(tasks[phase], completed=done, total=total)

        yield update
