"""The semantic extra in tests: installed by ``make dev`` (so CI always runs these tests); on a
machine without it they skip with the reason, never silently."""

from __future__ import annotations

import os

import pytest

from projection.semantic import encoder


def require_semantic() -> None:
    """Skip (fail under CI) when the semantic extra is not installed."""
    if encoder.available():
        return
    reason = "the semantic extra is not installed (make semantic)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}: CI must run the semantic tests")
    pytest.skip(reason)
