"""A service result as the JSON every surface emits: the model's own dump, written once.

The use cases answer with the pydantic models of ``service.results*``; REST hands them to
FastAPI as ``response_model`` (which dumps them the same way), and MCP (``structuredContent``),
the CLI (``--json``), the console and gRPC (before its per-message converters) call
:func:`as_json`. Fields the service left unset stay absent (``exclude_unset``), aliases are used
(``from``), instants are already ISO text. A plain value (a dict from the CLI's remote client,
a string, a number) passes through unchanged.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class _Model(Protocol):
    def model_dump(self, *, mode: str, by_alias: bool, exclude_unset: bool) -> dict[str, Any]: ...


def as_json(result: object) -> Any:
    """``result`` (a model, a list, tuple or dict holding models, or plain JSON) as plain
    JSON."""
    if isinstance(result, _Model):
        return result.model_dump(mode="json", by_alias=True, exclude_unset=True)
    if isinstance(result, (list, tuple)):
        return [as_json(item) for item in result]
    if isinstance(result, dict):  # an adapter's envelope around results ({"tokens": [...]})
        return {key: as_json(value) for key, value in result.items()}
    return result
