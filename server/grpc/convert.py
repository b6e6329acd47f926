"""Protobuf messages ↔ the plain dicts and arguments of the service layer (transport only).

Protobuf types stop here: requests become service arguments, service results (JSON-ready dicts
with the field names of docs/product.md) become response messages by field name, with
``google.protobuf.json_format``. Proto fields carry the same names as the dict keys, so no
per-field mapping code is needed; the few renamed ones (a pointer move's ``from``/``to``) use
``json_name`` in the ``.proto``.

A result key the response message does not declare is dropped by default, so a field the
service gains later does not break the gRPC surface before the ``.proto`` grows it; the tests
set ``STRICT`` so every key the service returns today must have a home in the messages.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypeVar

from google.protobuf import json_format
from google.protobuf.message import Message

from domain.values import parse_instant
from edge.results import as_json

M = TypeVar("M", bound=Message)

STRICT = False
"""Fail on result keys the response message lacks (set by the tests)."""

_MAX_EXACT_FLOAT = 2**53


def to_message(cls: type[M], data: object) -> M:
    """A response message from a service result (a model, dumped as every surface dumps it,
    or its JSON; ``None`` values leave fields unset)."""
    message: M = cls()
    json_format.ParseDict(as_json(data), message, ignore_unknown_fields=not STRICT)
    return message


def message_dict(message: Message) -> dict[str, Any]:
    """A request message as the JSON object the other surfaces would send: an unset
    ``optional`` field or message is omitted (the service applies its default); a plain scalar
    is always present, so a zero offset stays 0 instead of vanishing."""
    data = json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    return dict(_json_numbers(data))


def present(message: Message, *names: str) -> dict[str, Any]:
    """Keyword arguments for the ``optional`` fields among ``names`` that the client set."""
    return {name: getattr(message, name) for name in names if message.HasField(name)}


def opt(message: Message, name: str) -> Any:
    """An ``optional`` field's value, or None when unset."""
    return getattr(message, name) if message.HasField(name) else None


def struct(message: Message, name: str) -> dict[str, Any] | None:
    """A ``google.protobuf.Struct`` field as a dict (None when unset)."""
    if not message.HasField(name):
        return None
    return dict(_json_numbers(json_format.MessageToDict(getattr(message, name))))


def instant(message: Message, name: str) -> datetime | None:
    """An ``optional`` RFC 3339 timestamp field as a UTC datetime (``domain.values``' rule:
    a time without a zone is refused)."""
    text = opt(message, name)
    if text is None:
        return None
    malformed = (
        "malformed {name} {text!r}: expected an RFC 3339 timestamp such as 2026-01-01T12:00:00Z"
    )
    return parse_instant(text, name, field=name, malformed=malformed)


def _json_numbers(value: Any) -> Any:
    """Struct numbers are doubles: give back integral ones as ints, as JSON surfaces do."""
    if isinstance(value, float) and value.is_integer() and abs(value) < _MAX_EXACT_FLOAT:
        return int(value)
    if isinstance(value, dict):
        return {k: _json_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_numbers(v) for v in value]
    return value
