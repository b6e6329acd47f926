"""Turning command-line text into service arguments: body files, JSON files, instants, scopes.

Only parsing lives here; every rule about the values themselves (body size, empty bodies, id
shapes, roles, classifications) belongs to the service, which owns the error messages.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from domain.errors import InvalidArgument
from domain.values import RepoRef
from domain.values import parse_instant as instant

STDIN = "-"


def read_bytes(path: str, what: str) -> tuple[bytes, str]:
    """The bytes of ``path`` (``-`` = stdin) and a name for messages."""
    if path == STDIN:
        return sys.stdin.buffer.read(), "stdin"
    return _read_file(path, what), path


def read_text_file(path: Path, what: str) -> str:
    """A UTF-8 file's text (never stdin: ``-`` names a file here)."""
    return decode_utf8(_read_file(str(path), what), str(path), what)


def _read_file(path: str, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise InvalidArgument(f"{what} {path} does not exist", field=what, path=path) from None
    except IsADirectoryError:
        raise InvalidArgument(f"{what} {path} is a directory", field=what, path=path) from None
    except OSError as exc:
        raise InvalidArgument(
            f"cannot read {what} {path}: {exc.strerror or exc}", field=what, path=path
        ) from None


def decode_utf8(data: bytes, name: str, what: str) -> str:
    """Strict UTF-8 (a leading byte-order mark is dropped), naming the first bad byte."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidArgument(
            f"{what} {name} is not valid UTF-8: {exc.reason} at byte offset {exc.start}",
            field=what,
            path=name,
            byte_offset=exc.start,
        ) from None
    return text.removeprefix("\ufeff")


def read_body(path: str) -> str:
    """A version body from a file or stdin."""
    data, name = read_bytes(path, "body file")
    return decode_utf8(data, name, "body file")


def read_json_object(path: str, what: str) -> dict[str, Any]:
    """A JSON object from a file or stdin."""
    data, name = read_bytes(path, what)
    try:
        value = json.loads(decode_utf8(data, name, what))
    except json.JSONDecodeError as exc:
        raise InvalidArgument(
            f"{what} {name} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
            field=what,
            path=name,
        ) from None
    if not isinstance(value, dict):
        raise InvalidArgument(f"{what} {name} must hold a JSON object", field=what, path=name)
    return value


def read_pins(path: str) -> dict[str, str]:
    """``{element_id: version_id}`` from a JSON file."""
    pins = read_json_object(path, "pins file")
    if not all(isinstance(v, str) for v in pins.values()):
        raise InvalidArgument(
            f"pins file {path} must map element ids to version id strings", field="pins file"
        )
    return {str(k): v for k, v in pins.items()}


def parse_instant(text: str | None, option: str) -> datetime | None:
    """ISO-8601 date-time with ``Z`` or an offset → aware UTC datetime (``domain.values``' rule,
    the same on every surface: a time without a zone, or a date alone, is refused)."""
    if text is None:
        return None
    malformed = (
        "malformed {name} {text!r}: expected an ISO-8601 date-time with a zone such as "
        "2025-05-01T12:00:00Z"
    )
    return instant(text, option, field=option.lstrip("-"), malformed=malformed)


def grant_scope(repo: str | None, org: str | None, tenant: str | None, everything: bool) -> str:
    """Exactly one of ``--repo T/O/R``, ``--org T/O``, ``--tenant T``, ``--global`` → a scope."""
    given = [
        ("--repo", repo, 3),
        ("--org", org, 2),
        ("--tenant", tenant, 1),
        ("--global", "*" if everything else None, 1),
    ]
    chosen = [(name, value, parts) for name, value, parts in given if value is not None]
    if len(chosen) != 1:
        raise InvalidArgument(
            "give exactly one scope: --repo TENANT/ORG/REPO, --org TENANT/ORG, --tenant TENANT "
            "or --global",
            field="scope",
        )
    name, value, parts = chosen[0]
    if name == "--repo":
        return RepoRef.parse(value).key
    if len(value.split("/")) != parts:
        shape = "TENANT/ORG" if parts == 2 else "TENANT"
        raise InvalidArgument(f"malformed {name} {value!r}: expected {shape}", field="scope")
    return value
