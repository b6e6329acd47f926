"""The authorization gate's engine: Casbin RBAC with domains, compiled per caller.

The only module that imports casbin. The service layer asks one question per operation —
"what may this caller do in this repository, up to which classification?" — and gets a
``Permission``; reads use the same answer as the filter inside their queries.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

import casbin
from casbin.model import Model

from domain.permissions import (
    ROLE_ACTIONS,
    Action,
    Role,
    actions_of,
    clearance_by_action,
    narrow_clearances,
    scope_matches,
)
from domain.values import Classification

_MODEL_TEXT = (Path(__file__).parent / "rbac_model.conf").read_text(encoding="utf-8")
# Casbin parses its matcher with ``ast.parse`` on every ``enforce``; CPython 3.11's AST state is
# not thread-safe (python/cpython#106905: "AST constructor recursion depth mismatch"), so
# threaded servers serialize the decision. It is CPU-bound under the GIL anyway.
_CASBIN_LOCK = threading.Lock()
_MAX_MEMOIZED = 10_000


@dataclass(frozen=True)
class Grant:
    """A role on a scope with a clearance."""

    principal_id: str
    role: str
    scope_key: str
    clearance: str


@dataclass(frozen=True)
class Caller:
    """Who is asking: principal, optional on-behalf-of principal, claimed roles, purpose."""

    principal_id: str
    on_behalf_of: str | None = None
    roles: tuple[str, ...] = ()
    purpose: str | None = None
    tool_id: str | None = None
    token_id: str | None = None  # the bearer token presented (None: local, no token)


@dataclass(frozen=True)
class Permission:
    """What a caller may do in one repository, and up to which classification per action.

    Clearance is per action: it comes only from the grants whose role allows that action, so a
    grant that cannot read (``ingestor``) never raises what its holder may read.
    """

    repo_key: str
    actions: frozenset[Action]
    clearances: Mapping[Action, Classification] = field(
        default_factory=lambda: MappingProxyType({}), compare=True, hash=False
    )

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "clearances",
            MappingProxyType({a: c for a, c in self.clearances.items() if a in self.actions}),
        )

    def can(self, action: Action) -> bool:
        """Whether ``action`` is allowed."""
        return action in self.actions

    def clearance_for(self, action: Action) -> Classification | None:
        """The highest classification ``action`` may touch here (None when not allowed)."""
        return self.clearances.get(action)

    def may_act_on(self, action: Action, classification: Classification) -> bool:
        """Whether ``action`` is allowed on content of this classification."""
        top = self.clearances.get(action)
        return top is not None and classification.rank <= top.rank

    @property
    def clearance(self) -> Classification:
        """Read clearance (the lowest level when the caller may not read at all; check
        ``may_see`` rather than comparing with it)."""
        return self.clearances.get(Action.READ, NO_PERMISSION_CLEARANCE)

    @property
    def read_rank(self) -> int:
        """Rank of the read clearance, -1 when the caller may not read here."""
        top = self.clearances.get(Action.READ)
        return -1 if top is None else top.rank

    def may_see(self, classification: Classification) -> bool:
        """Whether content of this classification is within read clearance."""
        return self.may_act_on(Action.READ, classification)

    @property
    def any(self) -> bool:
        """Whether the caller may do anything here (otherwise the repository is invisible)."""
        return bool(self.actions)


NO_PERMISSION_CLEARANCE = Classification.PUBLIC


def _scope_domain_match(request_domain: str, grant_domain: str) -> bool:
    return scope_matches(grant_domain, request_domain)


class Authorizer:
    """Decides permissions from grants with a Casbin enforcer built for the principals at hand."""

    def __init__(self) -> None:
        self._decisions: dict[tuple[object, ...], Permission] = {}

    def _enforcer(self, grants: list[Grant]) -> casbin.Enforcer:
        model = Model()
        model.load_model_from_text(_MODEL_TEXT)
        enforcer = casbin.Enforcer(model, enable_log=False)
        enforcer.add_named_domain_matching_func("g", _scope_domain_match)
        for role, actions in ROLE_ACTIONS.items():
            for action in actions:
                enforcer.add_policy(role.value, action.value)
        for g in grants:
            enforcer.add_named_grouping_policy("g", g.principal_id, g.role, g.scope_key)
        return enforcer

    def _single(
        self,
        enforcer: casbin.Enforcer,
        grants: list[Grant],
        principal: str,
        repo_key: str,
        claimed: frozenset[Role],
    ) -> tuple[frozenset[Action], dict[Action, Classification]]:
        allowed = frozenset(a for a in Action if enforcer.enforce(principal, repo_key, a.value))
        mine = [
            (Role(g.role), Classification(g.clearance))
            for g in grants
            if g.principal_id == principal and scope_matches(g.scope_key, repo_key)
        ]
        if claimed:
            # Claimed roles select which grants count: their actions, and their clearance
            # only — a reader@public grant claimed as "reader" never borrows the clearance of
            # the same principal's auditor@internal grant.
            allowed &= actions_of(claimed)
            mine = [(role, level) for role, level in mine if role in claimed]
        return allowed, clearance_by_action(mine, allowed)

    def permission(self, grants: list[Grant], caller: Caller, repo_key: str) -> Permission:
        """Effective permission: the caller's, narrowed by claimed roles, intersected with the
        on-behalf-of principal's (never the union)."""
        claimed = frozenset(Role.parse(r) for r in caller.roles)
        # The decision depends only on these inputs, so it is memoized: a changed, added or
        # revoked grant is a different key, never a stale answer.
        key = (frozenset(grants), caller.principal_id, caller.on_behalf_of, claimed, repo_key)
        with _CASBIN_LOCK:
            decided = self._decisions.get(key)
            if decided is None:
                decided = self._decide(grants, caller, repo_key, claimed)
                if len(self._decisions) >= _MAX_MEMOIZED:
                    self._decisions.clear()
                self._decisions[key] = decided
        return decided

    def _decide(
        self, grants: list[Grant], caller: Caller, repo_key: str, claimed: frozenset[Role]
    ) -> Permission:
        enforcer = self._enforcer(grants)
        actions, levels = self._single(enforcer, grants, caller.principal_id, repo_key, claimed)
        if caller.on_behalf_of:
            other, other_levels = self._single(
                enforcer, grants, caller.on_behalf_of, repo_key, frozenset()
            )
            actions &= other
            levels = narrow_clearances(levels, other_levels)
        actions = frozenset(a for a in actions if a in levels)
        return Permission(repo_key, actions, levels)


def access_levels(perms: Mapping[str, Permission]) -> dict[str, list[str]]:
    """Repository key → the classification names readable there."""
    return {
        repo: [c.value for c in Classification if perm.may_see(c)] for repo, perm in perms.items()
    }
