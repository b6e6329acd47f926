"""Tests read a service result the way every surface emits it: ``result["proposal_id"]`` is the
model's JSON (``edge.results.as_json``), so the assertions written against the JSON answers
keep checking exactly what the wire carries. Only tests get this: in the product a result is
its model (attribute access, checked by mypy) until an adapter dumps it at the edge.

Installed by ``tests/conftest.py`` on the models' shared base.
"""

from __future__ import annotations

import json
import os
from typing import Any

from edge.results import as_json
from service.results import View

_model_eq = View.__eq__


def _getitem(self: View, key: str) -> Any:
    return as_json(self)[key]


def _contains(self: View, key: object) -> bool:
    return key in as_json(self)


def _get(self: View, key: str, default: Any = None) -> Any:
    return as_json(self).get(key, default)


def _keys(self: View) -> Any:
    return as_json(self).keys()


def _eq(self: View, other: object) -> bool:
    if isinstance(other, dict):
        return bool(as_json(self) == other)
    return bool(_model_eq(self, other))


_validate = View.model_validate.__func__  # type: ignore[attr-defined]


def _checked_validate(cls: type[View], obj: Any, *args: Any, **kwargs: Any) -> View:
    """Dev check (AMEIDE_CHECK_RESULTS=1): the model's JSON is the dict it was built from
    (same keys, same values; the order is the model's, as REST always had it)."""
    model = _validate(cls, obj, *args, **kwargs)
    if isinstance(obj, dict):
        before = json.dumps(obj, default=str, ensure_ascii=False, sort_keys=True)
        after = json.dumps(as_json(model), ensure_ascii=False, sort_keys=True)
        if before != after:
            raise AssertionError(f"{cls.__name__} changes the JSON:\n{before}\n{after}")
    return model


def install() -> None:
    View.__getitem__ = _getitem  # type: ignore[attr-defined]
    View.__contains__ = _contains  # type: ignore[attr-defined]
    View.get = _get  # type: ignore[attr-defined]
    View.keys = _keys  # type: ignore[attr-defined]
    View.__eq__ = _eq  # type: ignore[assignment,method-assign]
    View.__hash__ = None  # type: ignore[assignment]
    if os.environ.get("AMEIDE_CHECK_RESULTS") == "1":
        View.model_validate = classmethod(_checked_validate)  # type: ignore[assignment,method-assign]
