"""Evaluating routing conditions against a file, with a reason for every verdict.

Semantics: a field that is absent (or ``null``) fails every test except ``absent: true`` /
``present: false``. Values of different types never compare (``gt`` on text against a number is
false, ``true`` never equals ``1``). ``in`` and ``glob`` on a list field hold when any element
does; ``contains`` is list membership. ``all: []`` holds, ``any: []`` does not, ``none: []`` holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from ingest.paths import glob_match
from ingest.routing.model import FieldCondition, GroupCondition


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


MISSING: Final = _Missing()


@dataclass(frozen=True)
class RoutableFile:
    """What rules can see about a file: its path, its front matter and computed signals."""

    path: str
    front_matter: Mapping[str, Any] = field(default_factory=dict)
    signals: Mapping[str, Any] = field(default_factory=dict)


def lookup(file: RoutableFile, ref: str) -> Any:
    """The value of a field reference, or :data:`MISSING`."""
    if ref == "path":
        return file.path
    head, _, rest = ref.partition(".")
    value: Any = file.front_matter if head == "front_matter" else file.signals
    for key in rest.split("."):
        if not isinstance(value, Mapping) or key not in value:
            return MISSING
        value = value[key]
    return value


def evaluate(
    condition: FieldCondition | GroupCondition, file: RoutableFile
) -> tuple[bool, list[str]]:
    """Whether ``condition`` holds for ``file``, and a readable reason per test."""
    if isinstance(condition, FieldCondition):
        return _evaluate_field(condition, file)
    verdict = True
    reasons: list[str] = []
    for name, children in (
        ("all", condition.all),
        ("any", condition.any),
        ("none", condition.none),
    ):
        if children is None:
            continue
        results = [evaluate(child, file) for child in children]
        hits = [ok for ok, _ in results]
        holds = all(hits) if name == "all" else any(hits) if name == "any" else not any(hits)
        verdict = verdict and holds
        reasons.append(f"{name} → {'true' if holds else 'false'}")
        reasons += ["  " + line for _, lines in results for line in lines]
    return verdict, reasons


def _evaluate_field(condition: FieldCondition, file: RoutableFile) -> tuple[bool, list[str]]:
    value = lookup(file, condition.field)
    op, operand = condition.operator, condition.operand
    holds = _test(op, value, operand)
    shown = "missing" if value is MISSING else repr(value)
    return holds, [f"{condition.field} ({shown}) {op} {operand!r} → {'true' if holds else 'false'}"]


def _test(op: str, value: Any, operand: Any) -> bool:
    absent = value is MISSING or value is None
    if op in ("present", "absent"):
        wants_present = operand if op == "present" else not operand
        return absent is not wants_present
    if absent:
        return False
    if op == "equals":
        return same(value, operand)
    if op == "in":
        items = value if isinstance(value, list) else [value]
        return any(same(item, choice) for item in items for choice in operand)
    if op == "contains":
        return isinstance(value, list) and any(same(item, operand) for item in value)
    if op == "glob":
        items = value if isinstance(value, list) else [value]
        return any(isinstance(item, str) and glob_match(operand, item) for item in items)
    return _compare(op, value, operand)


def same(left: Any, right: Any) -> bool:
    """Equality that keeps booleans apart from numbers (YAML ``true`` is not ``1``)."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    return bool(left == right)


def _compare(op: str, value: Any, operand: Any) -> bool:
    numeric = (int, float)
    if isinstance(value, bool) or isinstance(operand, bool):
        return False
    both_numbers = isinstance(value, numeric) and isinstance(operand, numeric)
    both_text = isinstance(value, str) and isinstance(operand, str)
    if not (both_numbers or both_text):
        return False
    if op == "gt":
        return bool(value > operand)
    if op == "gte":
        return bool(value >= operand)
    if op == "lt":
        return bool(value < operand)
    return bool(value <= operand)
