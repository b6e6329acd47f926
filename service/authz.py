"""The authorization gate's engine: Casbin RBAC with domains, compiled per caller.

The only module that imports casbin. The service layer asks one question per operation —
"what may this caller do in this repository, up to which classification?" — and gets a
``Permission``; reads use the same answer as the filter inside their queries.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

import casbin
from casbin.model import Model

from domain.permissions import ROLE_ACTIONS, Action, Role, actions_of, scope_matches
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


@dataclass(frozen=True)
class Permission:
    """What a caller may do in one repository."""

    repo_key: str
    actions: frozenset[Action]
    clearance: Classification

    def can(self, action: Action) -> bool:
        """Whether ``action`` is allowed."""
        return action in self.actions

    def may_see(self, classification: Classification) -> bool:
        """Whether content of this classification is within clearance."""
        return classification.rank <= self.clearance.rank

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
    ) -> tuple[frozenset[Action], int]:
        allowed = frozenset(a for a in Action if enforcer.enforce(principal, repo_key, a.value))
        if claimed:
            allowed &= actions_of(claimed)
        ranks = [
            Classification(g.clearance).rank
            for g in grants
            if g.principal_id == principal
            and scope_matches(g.scope_key, repo_key)
            and ROLE_ACTIONS[Role(g.role)] & allowed
        ]
        return allowed, max(ranks, default=-1)

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
        actions, rank = self._single(enforcer, grants, caller.principal_id, repo_key, claimed)
        if caller.on_behalf_of:
            other, other_rank = self._single(
                enforcer, grants, caller.on_behalf_of, repo_key, frozenset()
            )
            actions &= other
            rank = min(rank, other_rank)
        if not actions or rank < 0:
            return Permission(repo_key, frozenset(), NO_PERMISSION_CLEARANCE)
        return Permission(repo_key, actions, list(Classification)[rank])
