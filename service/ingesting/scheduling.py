"""Running registered sources: the database lease, the ingest run, its record, the schedule.

A run takes the source's lease by compare-and-set (``SourceStore.lease_source``): of several
``serve`` processes on one database exactly one gets it, and while it holds it (renewed by a
heartbeat) no other starts a run of that source. The run is ``Ingest.ingest_backlog`` — the
same path as ``ameide ingest backlog``, so provenance, lifecycle, source time, PII and the
mass-retire guard apply — as the source's ``run_as`` principal (manual runs: as the caller).
Afterwards the run is recorded and the lease released with the next run time: the interval
(± jitter) after the previous due time, or after a failure ``interval × 2^(failures-1)``,
capped.
"""

from __future__ import annotations

import logging
import os
import random
import socket
import threading
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from domain.errors import AmeideError, FailedPrecondition, NotFound
from service.authz import Caller
from service.ingesting.backlog import Ingest
from service.ingesting.hooks import read_reference
from service.ingesting.results import SourceRunView
from service.kernel import Kernel
from service.views import iso

log = logging.getLogger("ameide.sources")
TOOL_ID = "ameide-sources"
MAX_ERROR_CHARS = 2000
ABANDONED = "abandoned: its runner stopped before recording the end (the lease expired)"


@dataclass(frozen=True)
class Timing:
    """How a runner schedules: lease length, jitter share of the interval, back-off cap."""

    lease_s: float = 300.0
    jitter: float = 0.1
    max_backoff_s: float = 3600.0


def runner_identity() -> str:
    """``host:pid:random`` — who holds a lease (unique per runner object)."""
    return f"{socket.gethostname()[:80]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class SourceRunner:
    """Leases, runs and records registered sources (one run at a time per runner object)."""

    def __init__(
        self, k: Kernel, ingest: Ingest, cache_dir: Path | None, timing: Timing | None = None
    ) -> None:
        self.k = k
        self.ingest = ingest
        self.cache_dir = cache_dir
        self.timing = timing or Timing()
        self.identity = runner_identity()
        self.wake = threading.Event()  # set when a webhook queued a run in this process

    # -- entry points ----------------------------------------------------------------------
    def run_due(self) -> int:
        """Run every source due now whose lease this runner wins; returns how many ran."""
        with self.k.uow(readonly=True) as uow:
            due = uow.store.due_sources(self.k.clock.now())
        ran = 0
        for source_id in due:
            row = self._lease(source_id, due_only=True)
            if row is None:
                continue  # another process won it, or it is no longer due
            trigger = "webhook" if row["queued_at"] is not None else "schedule"
            caller = Caller(row["run_as"], purpose=f"source {row['name']}", tool_id=TOOL_ID)
            self.execute(row, caller, trigger)
            ran += 1
        return ran

    def run_now(self, caller: Caller, source_id: str) -> SourceRunView:
        """Run one source now as ``caller`` (``source run``), if no run of it is in progress."""
        row = self._lease(source_id, due_only=False)
        if row is None:
            with self.k.uow(readonly=True) as uow:
                current = uow.store.get_source(source_id)
            if current is None:
                raise NotFound(f"source {source_id} not found")
            raise FailedPrecondition(
                f"a run of source {source_id} is in progress ({current['leased_by']})",
                leased_by=current["leased_by"],
            )
        return self.execute(row, caller, "manual")

    # -- one run ---------------------------------------------------------------------------
    def _lease(self, source_id: str, *, due_only: bool) -> dict[str, Any] | None:
        now = self.k.clock.now()
        until = now + timedelta(seconds=self.timing.lease_s)
        with self.k.uow() as uow:
            if not uow.store.lease_source(source_id, self.identity, now, until, due_only=due_only):
                return None
            row = uow.store.get_source(source_id)
            uow.commit()
        return row

    def execute(self, row: dict[str, Any], caller: Caller, trigger: str) -> SourceRunView:
        """Run a leased source, record the run, release the lease with the next run time."""
        started = self.k.clock.now()
        with self.k.uow() as uow:
            uow.store.abandon_source_runs(row["source_id"], started, ABANDONED)
            run_id = uow.store.start_source_run(row["source_id"], trigger, self.identity, started)
            uow.commit()
        heartbeat = _Heartbeat(self, row["source_id"])
        report: dict[str, Any] | None = None
        error: str | None = None
        try:
            report = self._ingest(row, caller)
        except Exception as exc:  # recorded on the run; the schedule backs off
            error = _one_line(exc)
            if not isinstance(exc, AmeideError):
                log.exception("source %s: run failed", row["source_id"])
        finally:
            heartbeat.stop()
        return self._finish(row, caller, run_id, trigger, started, report, error)

    def _ingest(self, row: dict[str, Any], caller: Caller) -> dict[str, Any]:
        credential = None
        if row["credential_env"] or row["credential_file"]:
            credential = read_reference(row["credential_env"], row["credential_file"])
            if credential is None:
                where = row["credential_env"] or row["credential_file"]
                raise FailedPrecondition(f"the source's credential ({where}) is unset or empty")
        return self.ingest.ingest_backlog(
            caller,
            row["location"],
            row["repo_key"],
            glob=row["glob"],
            ref=row["ref"],
            routing=row["routing"],
            routing_name=row["routing_name"] or "routing.yaml",
            cache_dir=self.cache_dir,
            credential=credential,
        ).model_dump(mode="json", by_alias=True, exclude_unset=True)  # stored with the run

    def _finish(
        self,
        row: dict[str, Any],
        caller: Caller,
        run_id: int,
        trigger: str,
        started: datetime,
        report: dict[str, Any] | None,
        error: str | None,
    ) -> SourceRunView:
        now = self.k.clock.now()
        failures = row["failures"] + 1 if error else 0
        status = "failed" if error else "ok"
        values: dict[str, Any] = {"failures": failures}
        if error or trigger != "webhook" or row["next_run_at"] is None:
            values["next_run_at"] = self.next_run(row, now, failures)
        with self.k.uow() as uow:
            uow.store.finish_source_run(run_id, now, status, error, report)
            if not uow.store.release_source(row["source_id"], self.identity, values):
                log.warning("source %s: the lease was lost during the run", row["source_id"])
            uow.store.clear_queued(row["source_id"], started)
            payload = {"source_id": row["source_id"], "run": run_id, "trigger": trigger}
            payload |= {"status": status, **({"error": error} if error else {})}
            self.k.audit.event(uow, caller, row["repo_key"], "source.run", now, payload=payload)
            uow.commit()
        return SourceRunView(
            run_id=run_id,
            source_id=row["source_id"],
            trigger=trigger,  # type: ignore[arg-type]  # one of Trigger's values
            runner=self.identity,
            started_at=iso(started) or "",
            finished_at=iso(now),
            status=status,  # type: ignore[arg-type]  # "ok" or "failed"
            error=error,
            report=report,
        )

    def next_run(self, row: dict[str, Any], now: datetime, failures: int) -> datetime:
        """The interval (± jitter) after the due time that started it (now, if that is long
        past or still ahead); after ``failures`` failed runs in a row,
        ``interval × 2^(failures-1)``, capped."""
        interval = float(row["interval_s"])
        if failures:
            cap = max(self.timing.max_backoff_s, interval)
            return now + timedelta(seconds=min(cap, interval * 2 ** (failures - 1)))
        due = row["next_run_at"]  # a manual run before its due time restarts the interval
        late = due is None or due > now or due + timedelta(seconds=interval) <= now
        base = now if late else due
        jitter = random.uniform(-self.timing.jitter, self.timing.jitter) * interval
        return base + timedelta(seconds=interval + jitter)


class _Heartbeat:
    """Renews a run's lease every third of its length until stopped."""

    def __init__(self, runner: SourceRunner, source_id: str) -> None:
        self.runner, self.source_id = runner, source_id
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="source lease", daemon=True)
        self._thread.start()

    def _beat(self) -> None:
        every = self.runner.timing.lease_s / 3
        while not self._stop.wait(every):
            until = self.runner.k.clock.now() + timedelta(seconds=self.runner.timing.lease_s)
            try:
                with self.runner.k.uow() as uow:
                    uow.store.renew_lease(self.source_id, self.runner.identity, until)
                    uow.commit()
            except Exception:
                log.exception("source %s: renewing the lease failed", self.source_id)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


class SourceScheduler:
    """``ameide serve``'s background thread: runs due sources every ``poll_s`` seconds, at
    once when a webhook of this process queued a run."""

    def __init__(self, runner: SourceRunner, poll_s: float = 1.0) -> None:
        self.runner = runner
        self.poll_s = poll_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="source scheduler", daemon=True)

    def start(self) -> None:
        """Start the thread."""
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.runner.wake.clear()
            try:
                self.runner.run_due()
            except Exception:  # the next round tries again; a run records its own failure
                log.exception("running due sources failed")
            self.runner.wake.wait(self.poll_s)

    def close(self, timeout: float = 10.0) -> None:
        """Stop after the run in progress (waits ``timeout`` seconds at most)."""
        self._stop.set()
        self.runner.wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout)


def _one_line(exc: BaseException) -> str:
    text = exc.message if isinstance(exc, AmeideError) else f"{type(exc).__name__}: {exc}"
    return " ".join(text.split())[:MAX_ERROR_CHARS]
