"""Use cases of registered sources: add, list, pause, resume, remove, status, run, webhook.

A source is a git repository (URL or local path) pulled into one repository by ``ameide serve``
on its interval and on signed webhooks (``service.ingesting.scheduling`` runs it). Managing sources
is an ``admin`` action on the repository (it decides what evidence flows in and holds
references to credentials); ``ingestor``\\ s may list them, read their status and run one now.
Unknown and unmanageable sources read the same (``NOT_FOUND``).

Credentials and the webhook secret are stored as references (an environment variable's name or
a file's path), never as values; a secret ``source add`` generates is written to a 0600 file
under the home and shown once. The webhook (:meth:`Sources.source_hook`) authenticates by the
source's secret alone — a missing source and a bad signature are the same ``UNAUTHENTICATED``.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from domain.errors import AlreadyExists, InvalidArgument, NotFound, Unauthenticated
from domain.permissions import Action
from domain.values import new_id, validate_id
from ingest.source import is_git_url
from service.authz import Caller
from service.core import UnitOfWork, repo_key
from service.ingesting.backlog import _routing_config, _valid_glob
from service.ingesting.hooks import (
    Delivery,
    read_delivery,
    read_reference,
    ref_matches,
    verified_provider,
)
from service.ingesting.results import (
    HookAnswer,
    SourceAdded,
    SourceList,
    SourceRemoved,
    SourceRunView,
    SourceStatus,
    SourceView,
    run_view,
    source_view,
)
from service.ingesting.scheduling import SourceRunner
from service.kernel import Kernel, acting

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,199}$")
MIN_INTERVAL_S, MAX_INTERVAL_S = 1, 30 * 24 * 3600
HOOK_BURST = 10.0
"""Webhook deliveries a source takes at once; then :data:`HOOK_PER_SECOND` (a token bucket
in the ``sources`` row, so every ``serve`` process on the database shares it)."""
HOOK_PER_SECOND = 1 / 6
MANAGE = (Action.ADMIN,)
AUDITED = {"source_id", "name", "location", "ref", "glob", "interval_s", "credential"}
AUDITED |= {"hook_secret_ref", "routing"}
Outcome = Literal["queued", "duplicate", "ignored", "rate_limited"]
OBSERVE = (Action.ADMIN, Action.INGEST)


class Sources:
    """Registered sources: the registry, manual runs and the webhook."""

    def __init__(self, k: Kernel, runner: SourceRunner, secrets_dir: Path | None = None) -> None:
        self.k = k
        self.runner = runner
        self.secrets_dir = secrets_dir  # where generated webhook secrets are written (0600)

    @acting
    def add_source(
        self,
        caller: Caller,
        repo: str,
        name: str,
        *,
        url: str | None = None,
        path: str | None = None,
        ref: str = "main",
        glob: str = "**/*.md",
        routing: str | None = None,
        routing_name: str = "routing.yaml",
        interval_s: int = 3600,
        credential_env: str | None = None,
        credential_file: str | None = None,
        hook_secret_env: str | None = None,
        hook_secret_file: str | None = None,
    ) -> SourceAdded:
        """Register a git repository (``url`` or local ``path``) pulled into ``repo`` every
        ``interval_s`` seconds and on webhooks (admin of the repository). Credentials and the
        webhook secret are references (``*_env``: a variable's name, ``*_file``: a path);
        without one, a webhook secret is generated, kept in a 0600 file and shown once."""
        key = repo_key(repo)
        row: dict[str, Any] = {
            "source_id": new_id("src"),
            "repo_key": key,
            "name": _valid_name(name),
            "location": _location(url, path),
            "ref": _valid_ref(ref),
            "glob": _valid_glob(glob),
            "routing": routing,
            "routing_name": routing_name if routing is not None else None,
            "interval_s": _valid_interval(interval_s),
            **_references("credential", credential_env, credential_file),
            **_references("hook_secret", hook_secret_env, hook_secret_file),
        }
        _routing_config(routing, routing_name)  # refuse bad rules now, not at every run
        with self.k.uow() as uow:
            self.k.gate.repository(uow, caller, key, Action.ADMIN)
            if uow.store.find_source(key, row["name"]) is not None:
                raise AlreadyExists(f"{key} already has a source named {row['name']}", name=name)
            generated = None
            if not (hook_secret_env or hook_secret_file):
                generated, row["hook_secret_file"] = self._new_secret(row["source_id"])
            at = self.k.clock.now()
            row |= {"paused": False, "run_as": caller.principal_id, "created_at": at}
            row |= {"created_by": caller.principal_id, "next_run_at": at, "failures": 0}
            row |= {"queued_at": None, "leased_by": None, "lease_until": None}
            row |= {"hook_tokens": HOOK_BURST, "hook_refilled_at": None}
            uow.store.insert_source(row)
            view = source_view(row)
            audited = view.model_dump(include=AUDITED)
            self.k.audit.event(uow, caller, key, "source.added", at, payload=audited)
            uow.commit()
        return SourceAdded(**view.model_dump(), hook_secret=generated)

    def _new_secret(self, source_id: str) -> tuple[str, str]:
        """A random webhook secret written to ``secrets_dir/<id>.hook`` (0600): value, path."""
        if self.secrets_dir is None:
            raise InvalidArgument(
                "give the webhook secret by reference (hook_secret_env or hook_secret_file)",
                field="hook_secret_env",
            )
        self.secrets_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        secret = secrets.token_urlsafe(32)
        target = (self.secrets_dir / f"{source_id}.hook").resolve()
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(secret + "\n")
        return secret, str(target)

    @acting
    def list_sources(self, caller: Caller, repo: str) -> SourceList:
        """The sources registered for ``repo`` (its admins and ingestors)."""
        key = repo_key(repo)
        with self.k.uow(readonly=True) as uow:
            if not self._may(uow, caller, key, OBSERVE):
                self.k.gate.repository(uow, caller, key, Action.ADMIN)  # NOT_FOUND or DENIED
            rows = uow.store.list_sources(key)
        return SourceList(repository=key, sources=[source_view(r) for r in rows])

    @acting
    def pause_source(self, caller: Caller, source_id: str) -> SourceView:
        """Stop scheduled and webhook runs of a source (admin); a run in progress finishes."""
        return self._set_paused(caller, source_id, paused=True)

    @acting
    def resume_source(self, caller: Caller, source_id: str) -> SourceView:
        """Schedule a paused source again, its next run now (admin)."""
        return self._set_paused(caller, source_id, paused=False)

    def _set_paused(self, caller: Caller, source_id: str, *, paused: bool) -> SourceView:
        with self.k.uow() as uow:
            row = self._source(uow, caller, source_id, MANAGE)
            at = self.k.clock.now()
            values: dict[str, Any] = {"paused": paused}
            if not paused:
                values |= {"next_run_at": at, "failures": 0}
            uow.store.update_source(source_id, values)
            event = "source.paused" if paused else "source.resumed"
            payload = {"source_id": source_id, "name": row["name"]}
            self.k.audit.event(uow, caller, row["repo_key"], event, at, payload=payload)
            uow.commit()
            row |= values
        return source_view(row)

    @acting
    def remove_source(self, caller: Caller, source_id: str) -> SourceRemoved:
        """Unregister a source with its run records (admin). What it ingested stays."""
        with self.k.uow() as uow:
            row = self._source(uow, caller, source_id, MANAGE)
            uow.store.delete_source(source_id)
            at = self.k.clock.now()
            payload = {"source_id": source_id, "name": row["name"], "location": row["location"]}
            self.k.audit.event(uow, caller, row["repo_key"], "source.removed", at, payload=payload)
            uow.commit()
        if row["hook_secret_file"] and self.secrets_dir is not None:
            generated = self.secrets_dir.resolve() / f"{source_id}.hook"
            if Path(row["hook_secret_file"]) == generated:
                generated.unlink(missing_ok=True)
        return SourceRemoved(
            source_id=source_id, repository=row["repo_key"], name=row["name"], removed=True
        )

    @acting
    def source_status(self, caller: Caller, source_id: str, limit: int = 10) -> SourceStatus:
        """A source's schedule, last run, next run, last error and latest run reports."""
        if not 1 <= limit <= 100:
            raise InvalidArgument("limit must be 1-100", field="limit")
        with self.k.uow(readonly=True) as uow:
            row = self._source(uow, caller, source_id, OBSERVE)
            runs = [run_view(r) for r in uow.store.list_source_runs(source_id, limit)]
        finished = [r for r in runs if r.status != "running"]
        last = finished[0] if finished else None
        return SourceStatus(
            source=source_view(row),
            last_run=last,
            last_error=last.error if last is not None and last.status == "failed" else None,
            next_run_at=source_view(row).next_run_at,
            runs=runs,
        )

    @acting
    def run_source(self, caller: Caller, source_id: str) -> SourceRunView:
        """Pull and ingest a source now, as the caller (admin or ingestor), unless a run of
        it is in progress; returns the run with its report."""
        with self.k.uow(readonly=True) as uow:
            self._source(uow, caller, source_id, OBSERVE)
        return self.runner.run_now(caller, source_id)

    @acting
    def source_hook(self, source_id: str, headers: Mapping[str, str], body: bytes) -> HookAnswer:
        """A git host's push delivery (GitHub's ``X-Hub-Signature-256``, GitLab's
        ``X-Gitlab-Token``): a valid one queues a run of the source's ref; a redelivery (same
        delivery id) queues nothing. ``headers`` have lower-case names."""
        refused = Unauthenticated("missing or invalid webhook signature")
        if not isinstance(source_id, str) or not source_id.startswith("src_"):
            raise refused
        with self.k.uow(readonly=True) as uow:
            row = uow.store.get_source(source_id)
        secret = read_reference(row["hook_secret_env"], row["hook_secret_file"]) if row else None
        provider = verified_provider(headers, body, secret or "")
        if row is None or provider is None:
            raise refused
        delivery = read_delivery(provider, headers, body)
        outcome, reason = self._take_delivery(row, delivery)
        if outcome == "queued":
            self.runner.wake.set()
        return HookAnswer(
            source_id=source_id,
            outcome=outcome,
            queued=outcome == "queued",
            provider=provider,
            event=delivery.event,
            delivery_id=delivery.delivery_id,
            reason=reason,
        )

    def _take_delivery(self, row: dict[str, Any], delivery: Delivery) -> tuple[Outcome, str | None]:
        """Rate limit, deduplicate and queue a verified delivery, in one transaction."""
        source_id = row["source_id"]
        with self.k.uow() as uow:
            now = self.k.clock.now()
            if not uow.store.take_hook_token(source_id, now, HOOK_BURST, HOOK_PER_SECOND):
                return "rate_limited", "too many deliveries for this source; retry later"
            if delivery.delivery_id and not uow.store.record_delivery(
                source_id, delivery.delivery_id, now
            ):
                uow.commit()
                return "duplicate", f"delivery {delivery.delivery_id} was received before"
            reason = _ignored(row, delivery.ref)
            if reason is None:
                uow.store.queue_source(source_id, now)
            uow.commit()
        return ("ignored", reason) if reason is not None else ("queued", None)

    # -- helpers -----------------------------------------------------------------------------
    def _may(self, uow: UnitOfWork, caller: Caller, key: str, actions: tuple[Action, ...]) -> bool:
        perm = self.k.gate.permission(uow, caller, key)
        return any(perm.can(action) for action in actions)

    def _source(
        self, uow: UnitOfWork, caller: Caller, source_id: str, actions: tuple[Action, ...]
    ) -> dict[str, Any]:
        validate_id(source_id, "src", "source")
        self.k.gate.check_caller(caller)
        row = uow.store.get_source(source_id)
        if row is None or not self._may(uow, caller, str(row["repo_key"]), actions):
            raise NotFound(f"source {source_id} not found")
        return row


def _ignored(row: Mapping[str, Any], pushed: str | None) -> str | None:
    if row["paused"]:
        return "the source is paused"
    if pushed is None:
        return "not a push event"
    if not ref_matches(pushed, str(row["ref"])):
        return f"a push to {pushed}, not to the source's ref {row['ref']}"
    return None


def _valid_name(name: str) -> str:
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise InvalidArgument(
            "a source name is 1-100 letters, digits, '.', '_' or '-'", field="name"
        )
    return name


def _location(url: str | None, path: str | None) -> str:
    if (url is None) == (path is None):
        raise InvalidArgument("give exactly one of url and path", field="url")
    if url is not None:
        if not is_git_url(url) or url.startswith("-") or len(url) > 1000:
            raise InvalidArgument(f"not a git URL: {url!r}", field="url")
        if "://" in url and urlsplit(url).password is not None:
            raise InvalidArgument(
                "the URL holds a password: give it by reference (credential_env or "
                "credential_file), never in the URL",
                field="url",
            )
        return url
    assert path is not None
    resolved = Path(path).expanduser().resolve()
    if not resolved.is_dir() or len(str(resolved)) > 1000:
        raise InvalidArgument(f"no directory at {path!r}", field="path")
    return str(resolved)


def _valid_ref(ref: str) -> str:
    if not isinstance(ref, str) or not 0 < len(ref) <= 250 or ref.startswith("-"):
        raise InvalidArgument("ref must be 1-250 characters, not starting with '-'", field="ref")
    if any(ord(c) < 0x21 or ord(c) == 0x7F for c in ref):
        raise InvalidArgument("ref must not contain spaces or control characters", field="ref")
    return ref


def _valid_interval(seconds: int) -> int:
    if isinstance(seconds, bool) or not isinstance(seconds, int):
        raise InvalidArgument("interval must be a whole number of seconds", field="interval")
    if not MIN_INTERVAL_S <= seconds <= MAX_INTERVAL_S:
        raise InvalidArgument(
            f"interval must be {MIN_INTERVAL_S}-{MAX_INTERVAL_S} seconds", field="interval"
        )
    return seconds


def _references(what: str, env: str | None, file: str | None) -> dict[str, str | None]:
    """``{what}_env`` / ``{what}_file`` columns: a variable's name or an absolute path."""
    if env and file:
        raise InvalidArgument(f"give {what}_env or {what}_file, not both", field=f"{what}_env")
    if env is not None and not ENV_NAME.fullmatch(env):
        raise InvalidArgument(f"{what}_env must be an environment variable's name", field=what)
    if file is not None:
        file = str(Path(file).expanduser().resolve())
        if len(file) > 1000:
            raise InvalidArgument(f"{what}_file is longer than 1000 characters", field=what)
    return {f"{what}_env": env or None, f"{what}_file": file or None}
