"""Use cases: repositories, grants, tokens, legal hold."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from domain.audit import GLOBAL_CHAIN
from domain.errors import (
    AlreadyExists,
    InvalidArgument,
    NotFound,
    PermissionDenied,
)
from domain.permissions import (
    DELEGATE,
    ROLE_ACTIONS,
    Action,
    DelegationRecord,
    GrantRecord,
    Role,
    validate_subject,
)
from domain.repository import Repository
from domain.values import Classification, RepoRef, new_id, parse_scope, validate_principal
from service import results as r
from service import results_ops as ro
from service.admin.tokens import TokenRegistry
from service.authz import Caller, Permission
from service.core import UnitOfWork, repo_key
from service.kernel import Kernel, acting
from service.views import iso


class Admin:
    """Tenancy and identity administration."""

    def __init__(self, k: Kernel, tokens: TokenRegistry) -> None:
        self.k = k
        self._tokens = tokens

    def _require_admin_over(self, uow: UnitOfWork, caller: Caller, scope: str) -> Permission:
        if len(scope.split("/")) == 3:
            return self.k.gate.repository(uow, caller, scope, Action.ADMIN)
        perm = self.k.gate.permission(uow, caller, scope)
        if not perm.can(Action.ADMIN):
            raise PermissionDenied(f"{caller.principal_id} is not an admin of {scope}")
        return perm

    @staticmethod
    def _require_within_own(
        caller: Caller, perm: Permission, role: Role, level: Classification, scope: str
    ) -> None:
        """Nobody grants more than they hold: every action of the granted role must be one the
        granter may do on the scope, at a clearance at least the granted one."""
        for action in sorted(ROLE_ACTIONS[role]):
            if not perm.can(action):
                raise PermissionDenied(
                    f"{caller.principal_id} may not grant {role.value} on {scope}: "
                    f"it may not {action.value} there itself",
                    action=action.value,
                )
            if not perm.may_act_on(action, level):
                own = perm.clearance_for(action)
                raise PermissionDenied(
                    f"{caller.principal_id} may not grant clearance {level.value} on {scope}: "
                    f"its own clearance to {action.value} there is "
                    f"{own.value if own else 'none'}",
                    action=action.value,
                    clearance=level.value,
                )

    @acting
    def bootstrap_admin(self, principal: str) -> ro.AdminBootstrapped:
        """Grant global admin to the first administrator (``ameide init --admin``); idempotent."""
        validate_principal(principal)
        with self.k.uow() as uow:
            admins = [g for g in uow.store.grants_on("*") if g.role == Role.ADMIN.value]
            if any(g.principal_id == principal for g in admins):
                return ro.AdminBootstrapped(
                    principal_id=principal, role="admin", scope="*", created=False
                )
            if admins:
                raise PermissionDenied("an administrator already exists; ask them for a grant")
            self._write_grant(
                uow,
                Caller("service:ameide-init", purpose="bootstrap"),
                principal,
                Role.ADMIN,
                "*",
                Classification.RESTRICTED,
            )
            uow.commit()
        return ro.AdminBootstrapped(principal_id=principal, role="admin", scope="*", created=True)

    @acting
    def create_repository(self, caller: Caller, repo: str) -> r.Repository:
        """Create ``tenant/org/repo`` (admin of the organization, tenant or everything)."""
        ref = RepoRef.parse(repo)
        with self.k.uow() as uow:
            if not self.k.gate.permission(uow, caller, ref.key).can(Action.ADMIN):
                raise PermissionDenied(
                    f"{caller.principal_id} may not create repositories in {ref.org_key}"
                )
            if uow.store.get_repository(ref.key) is not None:
                raise AlreadyExists(f"repository {ref.key} already exists", repository=ref.key)
            at = self.k.clock.now()
            uow.store.ensure_tenant_and_org(ref, at)
            uow.store.insert_repository(Repository(ref, at, caller.principal_id))
            self.k.audit.event(
                uow, caller, ref.key, "repository.created", at, payload={"repository": ref.key}
            )
            uow.commit()
        return r.Repository(
            repository_id=ref.key,
            tenant_id=ref.tenant_id,
            organization_id=ref.organization_id,
            created_at=iso(at),
        )

    @acting
    def grant(
        self,
        caller: Caller,
        principal: str,
        role: str,
        scope: str,
        clearance: str | None = None,
        on_behalf_of: str | None = None,
    ) -> r.GrantMade:
        """Grant a role with a clearance on a scope (admin of that scope); or, with the role
        ``delegate``, let ``principal`` act on behalf of ``on_behalf_of`` there."""
        validate_principal(principal)
        if _is_delegate(role):
            if clearance:
                raise InvalidArgument(
                    "a delegation has no clearance of its own: acting for someone takes the "
                    "lower clearance of the two",
                    field="clearance",
                )
            return self.delegate(caller, principal, _subject(on_behalf_of), scope)
        _no_subject(on_behalf_of)
        role_ = Role.parse(role)
        level = Classification.parse(clearance) if clearance else Classification.INTERNAL
        scope = parse_scope(scope)
        with self.k.uow() as uow:
            perm = self._require_admin_over(uow, caller, scope)
            self._require_within_own(caller, perm, role_, level, scope)
            at = self._write_grant(uow, caller, principal, role_, scope, level)
            uow.commit()
        return r.GrantMade(
            principal_id=principal,
            role=role_.value,
            scope=scope,
            clearance=level.value,
            granted_at=iso(at),
        )

    def _write_grant(
        self,
        uow: UnitOfWork,
        caller: Caller,
        principal: str,
        role: Role,
        scope: str,
        level: Classification,
    ) -> datetime:
        at = self.k.clock.now()
        uow.store.upsert_grant(
            GrantRecord(
                new_id("gr"), principal, role.value, scope, level.value, at, caller.principal_id
            )
        )
        chain = _chain(scope)
        self.k.audit.event(
            uow,
            caller,
            chain,
            "grant.added",
            at,
            payload={
                "principal_id": principal,
                "role": role.value,
                "scope": scope,
                "clearance": level.value,
            },
        )
        return at

    @acting
    def revoke(
        self,
        caller: Caller,
        principal: str,
        role: str,
        scope: str,
        on_behalf_of: str | None = None,
    ) -> r.GrantRevoked:
        """Remove a grant (admin of the scope, who could have made it: the same clearance rule
        as granting); with the role ``delegate``, a delegation."""
        validate_principal(principal)
        if _is_delegate(role):
            return self.undelegate(caller, principal, _subject(on_behalf_of), scope)
        _no_subject(on_behalf_of)
        role_ = Role.parse(role)
        scope = parse_scope(scope)
        with self.k.uow() as uow:
            perm = self._require_admin_over(uow, caller, scope)
            held = next(
                (
                    g
                    for g in uow.store.grants_on(scope)
                    if g.principal_id == principal and g.role == role_.value
                ),
                None,
            )
            if held is None:
                raise NotFound(f"{principal} has no {role_.value} grant on {scope}")
            # Nobody undoes what they could not have done: revoking a restricted grant takes
            # the clearance granting it would.
            self._require_within_own(caller, perm, role_, Classification(held.clearance), scope)
            if not uow.store.delete_grant(principal, role_.value, scope):
                raise NotFound(f"{principal} has no {role_.value} grant on {scope}")
            at = self.k.clock.now()
            chain = _chain(scope)
            self.k.audit.event(
                uow,
                caller,
                chain,
                "grant.revoked",
                at,
                payload={"principal_id": principal, "role": role_.value, "scope": scope},
            )
            uow.commit()
        return r.GrantRevoked(principal_id=principal, role=role_.value, scope=scope, revoked=True)

    @acting
    def list_grants(self, caller: Caller, scope: str) -> list[r.GrantRow]:
        """Grants and delegations made on a scope (admin of that scope)."""
        scope = parse_scope(scope)
        with self.k.uow(readonly=True) as uow:
            self._require_admin_over(uow, caller, scope)
            grants = [
                {
                    "principal_id": g.principal_id,
                    "role": g.role,
                    "scope": g.scope_key,
                    "clearance": g.clearance,
                    "on_behalf_of": None,
                    "created_at": iso(g.created_at),
                    "created_by": g.created_by,
                }
                for g in uow.store.grants_on(scope)
            ]
            return [
                r.GrantRow.model_validate(row)
                for row in grants + [delegation_row(d) for d in uow.store.delegations_on(scope)]
            ]

    # -- delegations: who may act for whom ---------------------------------------------------
    def _may_delegate(
        self, uow: UnitOfWork, caller: Caller, subject: str, scope: str, verb: str
    ) -> None:
        """Only an admin of the scope, or the subject itself (acting for nobody), decides who
        may act for the subject there."""
        if subject == caller.principal_id and caller.on_behalf_of is None:
            return
        if not self.k.gate.permission(uow, caller, scope).can(Action.ADMIN):
            raise PermissionDenied(
                f"{caller.principal_id} may not {verb} a delegation for {subject} on {scope}: "
                f"only an admin of {scope} or {subject} itself may",
                action=Action.ADMIN.value,
            )

    @acting
    def delegate(
        self, caller: Caller, principal: str, on_behalf_of: str, scope: str
    ) -> r.GrantMade:
        """Let ``principal`` act on behalf of ``on_behalf_of`` (a principal, ``user:*`` or
        ``*``) on ``scope``: an admin of the scope, or the one acted for itself, may."""
        validate_principal(principal)
        subject = validate_subject(on_behalf_of, "on_behalf_of")
        scope = parse_scope(scope)
        with self.k.uow() as uow:
            self._may_delegate(uow, caller, subject, scope, "grant")
            at = self.k.clock.now()
            d = DelegationRecord(new_id("dg"), principal, subject, scope, at, caller.principal_id)
            if uow.store.insert_delegation(d):
                self._delegation_event(uow, caller, "delegation.added", d)
            uow.commit()
        return r.GrantMade(
            principal_id=principal,
            role=DELEGATE,
            scope=scope,
            clearance=None,
            on_behalf_of=subject,
            granted_at=iso(at),
        )

    def _delegation_event(
        self, uow: UnitOfWork, caller: Caller, event_type: str, d: DelegationRecord
    ) -> None:
        self.k.audit.event(
            uow,
            caller,
            _chain(d.scope_key),
            event_type,
            d.created_at,
            payload={
                "principal_id": d.principal_id,
                "on_behalf_of": d.on_behalf_of,
                "scope": d.scope_key,
            },
        )

    @acting
    def undelegate(
        self, caller: Caller, principal: str, on_behalf_of: str, scope: str
    ) -> r.GrantRevoked:
        """Remove a delegation (an admin of the scope, the one acted for, or its holder)."""
        validate_principal(principal)
        subject = validate_subject(on_behalf_of, "on_behalf_of")
        scope = parse_scope(scope)
        with self.k.uow() as uow:
            if not (principal == caller.principal_id and caller.on_behalf_of is None):
                self._may_delegate(uow, caller, subject, scope, "revoke")
            if not uow.store.delete_delegation(principal, subject, scope):
                raise NotFound(f"{principal} has no delegation for {subject} on {scope}")
            at = self.k.clock.now()
            d = DelegationRecord("", principal, subject, scope, at, caller.principal_id)
            self._delegation_event(uow, caller, "delegation.revoked", d)
            uow.commit()
        return r.GrantRevoked(
            principal_id=principal, role=DELEGATE, scope=scope, on_behalf_of=subject, revoked=True
        )

    # -- bearer tokens: the TokenRegistry collaborator does the work -----------------------
    @acting
    def authenticate(self, secret: str) -> str:
        """The principal of a valid, unrevoked bearer token."""
        return self._tokens.authenticate(secret).principal_id

    @acting
    def set_legal_hold(self, caller: Caller, repo: str, held: bool) -> r.LegalHold:
        """Place or release a legal hold (admin)."""
        key = repo_key(repo)
        if not isinstance(held, bool):
            raise InvalidArgument("held must be true or false", field="held")
        with self.k.uow() as uow:
            self.k.gate.repository(uow, caller, key, Action.ADMIN)
            at = self.k.clock.now()
            uow.store.set_legal_hold(key, held, at, caller.principal_id)
            self.k.audit.event(
                uow, caller, key, "legal_hold.set" if held else "legal_hold.released", at
            )
            uow.commit()
        return r.LegalHold(repository_id=key, legal_hold=held, changed_at=iso(at))


def _is_delegate(role: str) -> bool:
    return isinstance(role, str) and role.strip().lower() == DELEGATE


def _subject(on_behalf_of: str | None) -> str:
    if not on_behalf_of:
        raise InvalidArgument(
            "the delegate role needs whom it lets act for: --for PRINCIPAL (or user:* for a "
            "gateway acting for every user)",
            field="on_behalf_of",
        )
    return validate_subject(on_behalf_of.strip(), "on_behalf_of")


def _no_subject(on_behalf_of: str | None) -> None:
    if on_behalf_of:
        raise InvalidArgument(
            "on_behalf_of (--for) goes only with the delegate role", field="on_behalf_of"
        )


def _chain(scope: str) -> str:
    return scope if len(scope.split("/")) == 3 else GLOBAL_CHAIN


def delegation_row(d: DelegationRecord) -> dict[str, Any]:
    """A delegation as a row of the grant list."""
    return {
        "principal_id": d.principal_id,
        "role": DELEGATE,
        "scope": d.scope_key,
        "clearance": None,
        "on_behalf_of": d.on_behalf_of,
        "created_at": iso(d.created_at),
        "created_by": d.created_by,
    }
