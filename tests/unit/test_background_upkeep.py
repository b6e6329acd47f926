"""The background upkeep's waiting: ``settle`` gathers a batch, ``quiet`` waits for a burst of
writes to pause (embedding after a burst, not version by version during it), ``longest`` bounds
that wait. Real threads and clocks, with margins a busy machine keeps."""

from __future__ import annotations

import threading
import time
from typing import Any

from service.indexing.background import BackgroundUpkeep


class Recorder:
    """A maintainer that records when it was asked to catch up."""

    label = "test index"

    def __init__(self) -> None:
        self.calls: list[float] = []
        self.lock = threading.Lock()

    def catch_up(self, *, wait: bool = False) -> int:
        with self.lock:
            self.calls.append(time.monotonic())
        return 0


def _burst(upkeep: BackgroundUpkeep, seconds: float, every: float = 0.05) -> float:
    """Poke every ``every`` seconds for ``seconds``; the instant of the last poke."""
    end = time.monotonic() + seconds
    last = time.monotonic()
    while time.monotonic() < end:
        upkeep.poke()
        last = time.monotonic()
        time.sleep(every)
    return last


def _upkeep(**options: Any) -> tuple[BackgroundUpkeep, Recorder]:
    recorder = Recorder()
    return BackgroundUpkeep(recorder, **options), recorder  # type: ignore[arg-type]


def test_quiet_upkeep_waits_until_the_writes_pause_then_catches_up_once() -> None:
    upkeep, recorder = _upkeep(quiet=1.0, longest=60.0)
    try:
        last = _burst(upkeep, 1.5)
        assert upkeep.wait_idle(timeout=30)
        assert recorder.calls, "never caught up"
        assert recorder.calls[0] >= last + 0.5, "caught up during the burst of writes"
        assert len(recorder.calls) == 1
    finally:
        upkeep.close()


def test_quiet_upkeep_still_catches_up_within_longest_while_writes_go_on() -> None:
    upkeep, recorder = _upkeep(quiet=1.0, longest=0.3)
    try:
        last = _burst(upkeep, 2.5)
        assert recorder.calls, "never caught up"
        assert recorder.calls[0] < last, "waited for the burst to end past `longest`"
    finally:
        upkeep.close()


def test_without_quiet_the_upkeep_catches_up_during_the_burst() -> None:
    upkeep, recorder = _upkeep(settle=0.02)
    try:
        last = _burst(upkeep, 1.0)
        assert recorder.calls
        assert recorder.calls[0] < last
    finally:
        upkeep.close()
