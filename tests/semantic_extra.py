"""Semantic recall in tests: its packages are main dependencies (so CI always runs these tests);
on a machine whose install lacks them they skip with the reason, never silently."""

from __future__ import annotations

import os

import pytest

from projection.semantic import encoder


def require_semantic() -> None:
    """Skip (fail under CI) when the embedding model or its libraries are not installed."""
    if encoder.available():
        return
    reason = "the embedding model is not installed (make dev installs it)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}: CI must run the semantic tests")
    pytest.skip(reason)
