"""Use cases: baselines, promotion and roll back of the published pointer, diff, as_of."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from domain.errors import Conflict, FailedPrecondition, InvalidArgument, NotFound
from domain.merge import diff_pins, unified_diff
from domain.model import Baseline, PointerMove
from domain.permissions import Action
from domain.values import (
    MAX_RATIONALE_CHARS,
    Classification,
    SourceKind,
    new_id,
    validate_id,
    validate_instant,
    validate_text,
)
from service import results as r
from service.authz import Caller, Permission
from service.core import UnitOfWork, repo_key
from service.governance.decisions import Decisions
from service.kernel import Kernel, acting
from service.views import baseline_view, iso, move_view


class Publishing:
    """Baselines and the published pointer."""

    def __init__(self, k: Kernel, decisions: Decisions) -> None:
        self.k = k
        self.decisions = decisions

    def _baseline(
        self, uow: UnitOfWork, caller: Caller, baseline_id: str, action: Action = Action.READ
    ) -> tuple[Baseline, Permission]:
        validate_id(baseline_id, "bl", "baseline")
        b = uow.store.get_baseline(baseline_id)
        missing = NotFound(f"baseline {baseline_id} not found", baseline_id=baseline_id)
        if b is None:
            raise missing
        return b, self.k.gate.scoped(uow, caller, b.repo_key, action, missing)

    def _visible_pins(self, uow: UnitOfWork, b: Baseline, perm: Permission) -> dict[str, str]:
        """Pins whose element the caller may see (trimming: hidden pins are not even counted)."""
        out = {}
        for element_id, version_id in b.pins.items():
            el = uow.store.get_element(element_id)
            if el is not None and perm.may_see(el.classification):
                out[element_id] = version_id
        return out

    @acting
    def create_baseline(
        self, caller: Caller, repo: str, name: str | None = None, pins: dict[str, str] | None = None
    ) -> r.Baseline:
        """Pin every canonical, non-retired element at its head, or the explicit ``pins``."""
        key = repo_key(repo)
        with self.k.uow() as uow:
            perm = self.k.gate.repository(uow, caller, key, Action.PUBLISH)
            at = self.k.clock.now()
            chosen = (
                self._check_pins(uow, perm, key, pins)
                if pins is not None
                else uow.store.canonical_heads(key)
            )
            if not chosen:
                raise FailedPrecondition(f"repository {key} has no canonical elements to pin")
            parent = uow.store.get_pointer(key)[0]
            b = Baseline(
                new_id("bl"),
                key,
                validate_text(name or f"baseline {at.strftime('%Y-%m-%d %H:%M:%S')}", "name", 200),
                at,
                caller.principal_id,
                chosen,
                parent,
            )
            uow.store.insert_baseline(b)
            self.k.audit.event(
                uow,
                caller,
                key,
                "baseline.created",
                at,
                baseline_id=b.baseline_id,
                payload={"name": b.name, "pins": len(chosen), "explicit": pins is not None},
            )
            uow.commit()
        return r.Baseline.model_validate(baseline_view(b))

    def _check_pins(
        self, uow: UnitOfWork, perm: Permission, key: str, pins: dict[str, str]
    ) -> dict[str, str]:
        if not isinstance(pins, dict) or not pins:
            raise InvalidArgument(
                "explicit pins must be a non-empty mapping of element_id to version_id",
                field="pins",
            )
        for element_id, version_id in pins.items():
            validate_id(element_id, "el", "element")
            validate_id(version_id, "ver", "version")
            el = uow.store.get_element(element_id)
            if el is None or el.repo_key != key or not perm.may_see(el.classification):
                raise NotFound(f"element {element_id} not found", element_id=element_id)
            if el.source_kind is not SourceKind.CANONICAL:
                raise InvalidArgument(
                    f"element {element_id} is {el.source_kind.value}; "
                    "baselines pin canonical elements only",
                    field="pins",
                )
            v = uow.store.get_version(version_id)
            if v is None or v.element_id != element_id:
                raise NotFound(f"version {version_id} of element {element_id} not found")
        return dict(pins)

    @acting
    def baseline_show(self, caller: Caller, baseline_id: str) -> r.Baseline:
        """A baseline with its (trimmed) pins and whether it is the published one."""
        with self.k.uow(readonly=True) as uow:
            b, perm = self._baseline(uow, caller, baseline_id)
            view = baseline_view(
                Baseline(
                    b.baseline_id,
                    b.repo_key,
                    b.name,
                    b.created_at,
                    b.created_by,
                    self._visible_pins(uow, b, perm),
                    b.parent_baseline_id,
                )
            )
            view["published"] = uow.store.get_pointer(b.repo_key)[0] == b.baseline_id
            self.k.audit.log_read(uow, caller, "baseline.show", b.repo_key, baseline_id=baseline_id)
            uow.commit()
        return r.Baseline.model_validate(view)

    @acting
    def list_baselines(self, caller: Caller, repo: str) -> list[r.BaselineRow]:
        """Baselines of a repository, newest first."""
        key = repo_key(repo)
        with self.k.uow(readonly=True) as uow:
            self.k.gate.repository(uow, caller, key, Action.READ)
            published = uow.store.get_pointer(key)[0]
            rows = uow.store.list_baselines(key)
        return [
            r.BaselineRow.model_validate(row)
            for row in [
                {
                    "baseline_id": r["baseline_id"],
                    "name": r["name"],
                    "created_at": iso(r["created_at"]),
                    "created_by": r["created_by"],
                    "published": r["baseline_id"] == published,
                }
                for r in rows
            ]
        ]

    @acting
    def baseline_diff(self, caller: Caller, baseline_a: str, baseline_b: str) -> r.BaselineDiff:
        """Versions added / changed / removed from A to B, with unified body diffs."""
        with self.k.uow(readonly=True) as uow:
            a, perm_a = self._baseline(uow, caller, baseline_a)
            b, perm_b = self._baseline(uow, caller, baseline_b)
            d = diff_pins(self._visible_pins(uow, a, perm_a), self._visible_pins(uow, b, perm_b))

            def entry(element_id: str, old: str | None, new: str | None) -> dict[str, Any]:
                vo = uow.store.get_version(old) if old else None
                vn = uow.store.get_version(new) if new else None
                shown = vn or vo
                assert shown is not None
                return {
                    "element_id": element_id,
                    "title": shown.title,
                    "from": {"baseline_id": a.baseline_id, "version_id": old},
                    "to": {"baseline_id": b.baseline_id, "version_id": new},
                    "diff": unified_diff(
                        vo.body if vo else "",
                        vn.body if vn else "",
                        f"{element_id}@{old or 'none'}",
                        f"{element_id}@{new or 'none'}",
                    ),
                }

            out = {
                "from_baseline_id": a.baseline_id,
                "to_baseline_id": b.baseline_id,
                "added": [entry(c.element_id, None, c.new_version_id) for c in d.added],
                "changed": [
                    entry(c.element_id, c.old_version_id, c.new_version_id) for c in d.changed
                ],
                "removed": [entry(c.element_id, c.old_version_id, None) for c in d.removed],
            }
            self.k.audit.log_read(
                uow, caller, "baseline.diff", a.repo_key, a=baseline_a, b=baseline_b
            )
            uow.commit()
        return r.BaselineDiff.model_validate(out)

    @acting
    def promote(
        self,
        caller: Caller,
        baseline_id: str,
        repo: str | None = None,
        reason: str | None = None,
        expected_baseline_id: str | None = None,
        _kind: str = "PROMOTE",
    ) -> r.PointerMove:
        """Move the published pointer (compare-and-swap); every move is recorded with a decision.

        ``expected_baseline_id`` makes the move conditional on what the caller saw as published.
        """
        reason = validate_text(reason, "reason", MAX_RATIONALE_CHARS, required=False)
        with self.k.uow() as uow:
            b, perm = self._baseline(uow, caller, baseline_id, Action.PUBLISH)
            if repo is not None and repo_key(repo) != b.repo_key:
                raise NotFound(f"baseline {baseline_id} not found in {repo}")
            current, revision = uow.store.get_pointer(b.repo_key)
            if expected_baseline_id is not None and current != expected_baseline_id:
                raise Conflict(
                    f"the published baseline is {current}, not {expected_baseline_id}",
                    current_baseline_id=current,
                )
            if current == baseline_id:
                raise FailedPrecondition(f"baseline {baseline_id} is already published")
            at = self.k.clock.now()
            if not uow.store.move_pointer(b.repo_key, revision, baseline_id, at):
                raise Conflict(
                    f"another promotion of {b.repo_key} won; re-read the pointer and retry",
                    repository=b.repo_key,
                )
            move = PointerMove(
                new_id("mv"), b.repo_key, current, baseline_id, at, caller.principal_id, reason
            )
            uow.store.insert_move(move)
            internal = perm.may_see(Classification.INTERNAL)
            level = Classification.INTERNAL if internal else perm.clearance
            dec = self.decisions.record(
                uow, caller, b.repo_key, _kind, reason, at, level, baseline_id=baseline_id
            )
            self.k.audit.event(
                uow,
                caller,
                b.repo_key,
                "pointer.moved",
                at,
                baseline_id=baseline_id,
                payload={
                    "from": current,
                    "to": baseline_id,
                    "reason": reason,
                    "kind": _kind,
                    "decision_element_id": dec.element_id,
                },
            )
            uow.commit()
        return r.PointerMove.model_validate(
            {**move_view(move), "decision_element_id": dec.element_id}
        )

    @acting
    def rollback(
        self,
        caller: Caller,
        repo: str,
        to: str | None = None,
        reason: str | None = None,
        expected_baseline_id: str | None = None,
    ) -> r.PointerMove:
        """Promote an older baseline: ``to``, or the one published before the current one;
        ``expected_baseline_id`` makes it conditional on what the caller saw as published."""
        key = repo_key(repo)
        if to is None:
            with self.k.uow(readonly=True) as uow:
                self.k.gate.repository(uow, caller, key, Action.PUBLISH)
                moves = uow.store.list_moves(key)
            if not moves or moves[-1].from_baseline_id is None:
                raise FailedPrecondition(f"{key} has no earlier published baseline to roll back to")
            to = moves[-1].from_baseline_id
        return self.promote(caller, to, key, reason, expected_baseline_id, _kind="ROLLBACK")

    @acting
    def published(self, caller: Caller, repo: str, as_of: datetime | None = None) -> r.Published:
        """The published baseline now, or as recorded at ``as_of``, with its move history."""
        key = repo_key(repo)
        validate_instant(as_of, "as_of")
        with self.k.uow(readonly=True) as uow:
            self.k.gate.repository(uow, caller, key, Action.READ)
            if as_of is None:
                baseline_id = uow.store.get_pointer(key)[0]
            else:
                baseline_id = uow.store.pointer_as_of(key, as_of)
            moves = [
                move_view(m) for m in uow.store.list_moves(key) if as_of is None or m.at <= as_of
            ]
            self.k.audit.log_read(uow, caller, "pointer.resolve", key, as_of=iso(as_of))
            uow.commit()
        return r.Published.model_validate(
            {"repository_id": key, "as_of": iso(as_of), "baseline_id": baseline_id, "moves": moves}
        )
