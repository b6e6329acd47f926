"""Named steps, run in order, stopping at the first broken one.

A step is a function that returns a one-line detail (what it saw) or raises: ``StepFailed`` for
an outcome that is not what docs/product.md §9 says, ``StepSkipped`` when it cannot apply here (e.g.
no configured home to check), anything else for a surface that broke. The runner records each
result, prints it as it goes, calls the ``after_step`` hook after every passing step (tests use
it to inject a fault) and stops at the first failure.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

OK, FAIL, SKIP = "ok", "fail", "skip"


class StepFailed(Exception):
    """A step saw an outcome other than the one the scenario requires."""


class StepSkipped(Exception):
    """A step does not apply in this run; the reason is reported."""


class Stop(Exception):
    """Raised by the runner after a failed step: nothing after it runs."""


def expect(condition: object, reason: str) -> None:
    """Fail the current step with ``reason`` unless ``condition`` holds."""
    if not condition:
        raise StepFailed(reason)


@dataclass
class StepResult:
    """What one step did."""

    name: str
    status: str
    detail: str
    seconds: float

    @property
    def phase(self) -> str:
        """``phase0``, ``phase1`` or ``phase2``."""
        return self.name.split(".", 1)[0]


@dataclass
class SmokeReport:
    """Every step that ran, in order; the first failed one names the broken step."""

    steps: list[StepResult] = field(default_factory=list)
    notes: dict[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> StepResult | None:
        """The broken step (None when every step passed or was skipped)."""
        return next((s for s in self.steps if s.status == FAIL), None)

    @property
    def ok(self) -> bool:
        """Whether the smoke passed."""
        return self.failed is None

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` document."""
        failed = self.failed
        return {
            "ok": self.ok,
            "failed_step": failed.name if failed else None,
            "reason": failed.detail if failed else None,
            "steps": [{**asdict(s), "phase": s.phase} for s in self.steps],
            **self.notes,
        }


Hook = Callable[[str], None]
"""Called with the name of a step that just passed."""


def describe(exc: BaseException) -> str:
    """One line for an unexpected exception (service errors show their code)."""
    code = getattr(exc, "code", None)
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    head = code if isinstance(code, str) else type(exc).__name__
    return " ".join(f"{head}: {message}".split())


class Runner:
    """Runs steps in order into a report; raises ``Stop`` after the first failure."""

    def __init__(
        self,
        report: SmokeReport,
        *,
        on_result: Callable[[StepResult], None] | None = None,
        after_step: Hook | None = None,
    ) -> None:
        self.report = report
        self.on_result = on_result
        self.after_step = after_step

    def step(self, name: str, run: Callable[[], str | None]) -> None:
        """Run one named step; record it; stop the smoke if it failed."""
        start = time.perf_counter()
        try:
            detail = run() or ""
            status = OK
        except StepSkipped as exc:
            status, detail = SKIP, str(exc)
        except StepFailed as exc:
            status, detail = FAIL, " ".join(str(exc).split())
        except Exception as exc:  # a surface broke: report it as this step's failure
            status, detail = FAIL, describe(exc)
        result = StepResult(name, status, detail, round(time.perf_counter() - start, 3))
        self.record(result)
        if status == FAIL:
            raise Stop(name)
        if status == OK and self.after_step is not None:
            self.after_step(name)

    def fail(self, name: str, detail: str) -> None:
        """Record a failure that happened outside a step body (e.g. while cleaning up)."""
        self.record(StepResult(name, FAIL, detail, 0.0))
        raise Stop(name)

    def record(self, result: StepResult) -> None:
        """Add a result to the report and show it."""
        self.report.steps.append(result)
        if self.on_result is not None:
            self.on_result(result)
