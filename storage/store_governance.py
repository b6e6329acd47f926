"""Proposals, decisions, idempotency, grants, tokens, erasure lookups, audit and access log."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from domain.audit import AuditEvent
from domain.model import ElementVersion, Proposal, ProposalStatus
from domain.permissions import DelegationRecord, GrantRecord, TokenRecord
from storage import schema as t
from storage.rows import (
    event_from_row,
    proposal_from_row,
    proposal_values,
    token_from_row,
    version_from_row,
)

_p, _g = t.proposals.c, t.grants.c
# Built once, as in ``storage.store``: the governed write path runs these on every call.
_INSERT_PROPOSAL = t.proposals.insert()
_PROPOSAL = sa.select(t.proposals).where(_p.proposal_id == sa.bindparam("proposal_id"))
_INSERT_DECISION = t.decisions.insert()
_GRANTS = sa.select(t.grants).where(_g.principal_id.in_(sa.bindparam("principals", expanding=True)))


@functools.cache
def _save_proposal(columns: tuple[str, ...]) -> sa.Update:
    """The compare-and-swap update of a proposal's mutable ``columns`` (built once)."""
    return (
        t.proposals.update()
        .where(_p.proposal_id == sa.bindparam("id"), _p.status == sa.bindparam("expected"))
        .values({c: sa.bindparam(f"new_{c}") for c in columns})
    )


class GovernanceStore:
    """Mixin of ``Store``: governance records."""

    conn: Connection
    _keep: Connection  # ``Store``'s connection for writes that leave its memo valid

    # -- proposals -----------------------------------------------------------------------
    def insert_proposal(self, p: Proposal, create_spec: dict[str, Any] | None = None) -> None:
        """Insert a proposal record."""
        self._keep.execute(  # proposals are not memoized
            _INSERT_PROPOSAL,
            dict(
                proposal_id=p.proposal_id,
                repo_key=p.repo_key,
                element_id=p.element_id,
                change_kind=p.change_kind.value,
                target_version_id=p.target_version_id,
                selector_kind=p.target_selector.kind.value,
                selector_baseline_id=p.target_selector.baseline_id,
                proposer_actor_type=p.proposed_by.actor_type,
                proposer_actor_id=p.proposed_by.actor_id,
                proposer_tool_id=p.proposed_by.tool_id,
                proposer_on_behalf_of=p.proposed_by.on_behalf_of,
                client_request_id=p.client_request_id,
                rebased_from=p.rebased_from,
                create_spec=create_spec,
                created_at=p.created_at,
                **proposal_values(p),
            ),
        )

    def get_proposal(self, proposal_id: str) -> Proposal | None:
        """A proposal by id."""
        r = self.conn.execute(_PROPOSAL, {"proposal_id": proposal_id}).first()
        return proposal_from_row(r) if r else None

    def get_create_spec(self, proposal_id: str) -> dict[str, Any]:
        """What a CREATE proposal asks for (kind, type_key, classification)."""
        r = self.conn.execute(
            sa.select(t.proposals.c.create_spec).where(t.proposals.c.proposal_id == proposal_id)
        ).one()
        return dict(r.create_spec or {})

    def save_proposal(self, p: Proposal, expected_status: ProposalStatus) -> bool:
        """Update mutable fields, compare-and-swap on the status; False when it changed."""
        values = proposal_values(p)
        params = {f"new_{c}": value for c, value in values.items()}
        params.update(id=p.proposal_id, expected=expected_status.value)
        return self._keep.execute(_save_proposal(tuple(values)), params).rowcount == 1

    def list_proposals(
        self, repo_key: str, status: ProposalStatus | None = None, proposer: str | None = None
    ) -> list[Proposal]:
        """Proposals of a repository, oldest first."""
        c = t.proposals.c
        q = sa.select(t.proposals).where(c.repo_key == repo_key)
        if status is not None:
            q = q.where(c.status == status.value)
        if proposer is not None:
            q = q.where(
                sa.or_(c.proposer_actor_id == proposer, c.proposer_on_behalf_of == proposer)
            )
        return [proposal_from_row(r) for r in self.conn.execute(q.order_by(c.created_at))]

    def open_proposal_counts(self) -> dict[str, int]:
        """OPEN proposals per repository key (repositories without any are absent)."""
        c = t.proposals.c
        q = (
            sa.select(c.repo_key, sa.func.count())
            .where(c.status == ProposalStatus.OPEN.value)
            .group_by(c.repo_key)
        )
        return {str(r[0]): int(r[1]) for r in self.conn.execute(q)}

    def insert_decision(self, values: dict[str, Any]) -> None:
        """Record a decision row."""
        self._keep.execute(_INSERT_DECISION, values)  # decisions are not memoized

    # -- idempotency ---------------------------------------------------------------------
    def get_idempotency(self, repo_key: str, principal: str, key: str) -> Row[Any] | None:
        """A previous request with the same client_request_id."""
        c = t.idempotency_keys.c
        return self.conn.execute(
            sa.select(t.idempotency_keys).where(
                c.repo_key == repo_key, c.principal_id == principal, c.client_request_id == key
            )
        ).first()

    def insert_idempotency(
        self,
        repo_key: str,
        principal: str,
        key: str,
        fingerprint: str,
        proposal_id: str,
        at: datetime,
    ) -> None:
        """Remember a client_request_id (a concurrent duplicate fails on the primary key)."""
        self.conn.execute(
            t.idempotency_keys.insert().values(
                repo_key=repo_key,
                principal_id=principal,
                client_request_id=key,
                request_fingerprint=fingerprint,
                proposal_id=proposal_id,
                created_at=at,
            )
        )

    # -- grants and tokens ---------------------------------------------------------------
    def grants_for(self, principals: list[str]) -> list[GrantRecord]:
        """Every grant of the given principals."""
        memo: dict[Any, Any] | None = getattr(self, "_memo", None)
        key = ("grants", tuple(principals))
        if memo is not None and key in memo:
            return list(memo[key])  # GrantRecords are frozen
        found = self._read_grants(principals)
        if memo is not None:
            memo[key] = list(found)
        return found

    def _read_grants(self, principals: list[str]) -> list[GrantRecord]:
        rows = self.conn.execute(_GRANTS, {"principals": list(principals)})
        return [
            GrantRecord(
                r.grant_id,
                r.principal_id,
                r.role,
                r.scope_key,
                r.clearance,
                r.created_at,
                r.created_by,
            )
            for r in rows
        ]

    def grants_on(self, scope_key: str) -> list[GrantRecord]:
        """Grants made exactly on a scope."""
        rows = self.conn.execute(
            sa.select(t.grants)
            .where(t.grants.c.scope_key == scope_key)
            .order_by(t.grants.c.principal_id, t.grants.c.role)
        )
        return [
            GrantRecord(
                r.grant_id,
                r.principal_id,
                r.role,
                r.scope_key,
                r.clearance,
                r.created_at,
                r.created_by,
            )
            for r in rows
        ]

    def upsert_grant(self, g: GrantRecord) -> None:
        """Insert a grant, or update the clearance of the same (principal, role, scope)."""
        c = t.grants.c
        res = self.conn.execute(
            t.grants.update()
            .where(c.principal_id == g.principal_id, c.role == g.role, c.scope_key == g.scope_key)
            .values(clearance=g.clearance)
        )
        if res.rowcount == 0:
            self.conn.execute(
                t.grants.insert().values(
                    grant_id=g.grant_id,
                    principal_id=g.principal_id,
                    role=g.role,
                    scope_key=g.scope_key,
                    clearance=g.clearance,
                    created_at=g.created_at,
                    created_by=g.created_by,
                )
            )

    def delete_grant(self, principal: str, role: str, scope_key: str) -> bool:
        """Remove a grant; False when there was none."""
        c = t.grants.c
        res = self.conn.execute(
            t.grants.delete().where(
                c.principal_id == principal, c.role == role, c.scope_key == scope_key
            )
        )
        return res.rowcount > 0

    # -- delegations -----------------------------------------------------------------------
    def delegations_of(self, principal: str) -> list[DelegationRecord]:
        """Every delegation that lets ``principal`` act for someone."""
        c = t.delegations.c
        rows = self.conn.execute(
            sa.select(t.delegations).where(c.principal_id == principal).order_by(c.scope_key)
        )
        return [_delegation(r) for r in rows]

    def delegations_on(self, scope_key: str) -> list[DelegationRecord]:
        """Delegations made exactly on a scope."""
        c = t.delegations.c
        rows = self.conn.execute(
            sa.select(t.delegations)
            .where(c.scope_key == scope_key)
            .order_by(c.principal_id, c.on_behalf_of)
        )
        return [_delegation(r) for r in rows]

    def insert_delegation(self, d: DelegationRecord) -> bool:
        """Record a delegation; False when the same one exists already."""
        c = t.delegations.c
        same = sa.select(c.delegation_id).where(
            c.principal_id == d.principal_id,
            c.on_behalf_of == d.on_behalf_of,
            c.scope_key == d.scope_key,
        )
        if self.conn.execute(same).first() is not None:
            return False
        self.conn.execute(
            t.delegations.insert().values(
                delegation_id=d.delegation_id,
                principal_id=d.principal_id,
                on_behalf_of=d.on_behalf_of,
                scope_key=d.scope_key,
                created_at=d.created_at,
                created_by=d.created_by,
            )
        )
        return True

    def delete_delegation(self, principal: str, on_behalf_of: str, scope_key: str) -> bool:
        """Remove a delegation; False when there was none."""
        c = t.delegations.c
        res = self.conn.execute(
            t.delegations.delete().where(
                c.principal_id == principal,
                c.on_behalf_of == on_behalf_of,
                c.scope_key == scope_key,
            )
        )
        return res.rowcount > 0

    def insert_token(
        self,
        token_id: str,
        principal: str,
        token_hash: str,
        at: datetime,
        by: str,
        parent_token_id: str | None = None,
    ) -> None:
        """Store a token's hash (and the token that minted it, if any)."""
        self.conn.execute(
            t.tokens.insert().values(
                token_id=token_id,
                principal_id=principal,
                token_hash=token_hash,
                created_at=at,
                created_by=by,
                parent_token_id=parent_token_id,
            )
        )

    def token_by_hash(self, token_hash: str) -> TokenRecord | None:
        """Look a token up by the hash of its secret."""
        r = self.conn.execute(
            sa.select(t.tokens).where(t.tokens.c.token_hash == token_hash)
        ).first()
        return token_from_row(r) if r else None

    def get_token(self, token_id: str) -> TokenRecord | None:
        """A token record by id."""
        r = self.conn.execute(sa.select(t.tokens).where(t.tokens.c.token_id == token_id)).first()
        return token_from_row(r) if r else None

    def list_tokens(self, principal: str | None = None) -> list[TokenRecord]:
        """Tokens of one principal (every token when None), oldest first; hashes never leave."""
        q = sa.select(t.tokens).order_by(t.tokens.c.created_at, t.tokens.c.token_id)
        if principal is not None:
            q = q.where(t.tokens.c.principal_id == principal)
        return [token_from_row(r) for r in self.conn.execute(q)]

    def child_token_ids(self, parent_ids: list[str]) -> list[str]:
        """Ids of the tokens minted by any of ``parent_ids``."""
        if not parent_ids:
            return []
        q = sa.select(t.tokens.c.token_id).where(t.tokens.c.parent_token_id.in_(parent_ids))
        return [r.token_id for r in self.conn.execute(q)]

    def revoke_token(self, token_id: str, at: datetime, by: str) -> None:
        """Mark a token revoked."""
        self.conn.execute(
            t.tokens.update()
            .where(t.tokens.c.token_id == token_id)
            .values(revoked_at=at, revoked_by=by)
        )

    # -- erasure (docs/product.md §8) ---------------------------------------------------------
    def versions_with_content(
        self, repo_key: str, content_sha256: str, *, for_update: bool = False
    ) -> list[ElementVersion]:
        """Every version in a repository whose body hashes to ``content_sha256`` (erased ones
        included), oldest first; locked with ``for_update`` so concurrent erasures queue.

        The lock is ``FOR NO KEY UPDATE`` (PostgreSQL; SQLite serializes writers anyway): an
        erasure changes no key, so it must not wait for the key-share locks that inserting
        rows which reference a version takes (the index upkeep writing that version's chunks)
        — waiting on them, with the upkeep then waiting on a version the erasure had locked,
        was a deadlock."""
        v, e = t.element_versions.c, t.elements.c
        q = (
            sa.select(t.element_versions)
            .join(t.elements, e.element_id == v.element_id)
            .where(e.repo_key == repo_key, v.content_sha256 == content_sha256)
            .order_by(v.recorded_at, v.version_id)
        )
        if for_update:
            q = q.with_for_update(of=t.element_versions, key_share=True)
        return [version_from_row(r) for r in self.conn.execute(q)]

    def proposals_of_elements(self, element_ids: Sequence[str]) -> dict[str, str]:
        """Proposal element id → proposal id, for those of ``element_ids`` that are proposals."""
        c = t.proposals.c
        if not element_ids:
            return {}
        q = sa.select(c.element_id, c.proposal_id).where(c.element_id.in_(sorted(element_ids)))
        return {r.element_id: r.proposal_id for r in self.conn.execute(q)}

    # -- audit and access log ------------------------------------------------------------
    def audit_chain_head(self, chain_key: str) -> tuple[int, str] | None:
        """The chain head kept beside the events, ``(last_seq, last_hash)``, or ``None``."""
        heads = t.audit_chain_heads.c
        row = self.conn.execute(
            sa.select(heads.last_seq, heads.last_hash).where(heads.chain_key == chain_key)
        ).first()
        return None if row is None else (int(row.last_seq), str(row.last_hash))

    def audit_events(
        self,
        chain_key: str,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        element_id: str | None = None,
        actor: str | None = None,
        limit: int | None = None,
    ) -> list[AuditEvent]:
        """Events of one chain in chain order, filtered."""
        c = t.audit_events.c
        q = sa.select(t.audit_events).where(c.chain_key == chain_key)
        if since is not None:
            q = q.where(c.occurred_at >= since)
        if until is not None:
            q = q.where(c.occurred_at <= until)
        if element_id is not None:
            q = q.where(c.element_id == element_id)
        if actor is not None:
            q = q.where(sa.or_(c.actor == actor, c.on_behalf_of == actor))
        q = q.order_by(c.chain_seq)
        if limit is not None:
            q = q.limit(limit)
        return [event_from_row(r) for r in self.conn.execute(q)]

    def log_access(
        self,
        at: datetime,
        principal: str,
        on_behalf_of: str | None,
        purpose: str | None,
        operation: str,
        repo_key: str | None,
        subject: dict[str, Any],
    ) -> None:
        """Append to the access log (reads)."""
        self.conn.execute(
            t.access_log.insert().values(
                at=at,
                principal_id=principal,
                on_behalf_of=on_behalf_of,
                purpose=purpose,
                operation=operation,
                repo_key=repo_key,
                subject=subject,
            )
        )

    def access_log(self, repo_key: str, limit: int = 1000) -> list[dict[str, Any]]:
        """Recent reads of a repository, newest first."""
        c = t.access_log.c
        rows = self.conn.execute(
            sa.select(t.access_log)
            .where(c.repo_key == repo_key)
            .order_by(c.access_id.desc())
            .limit(limit)
        )
        return [dict(r._mapping) for r in rows]


def _delegation(r: Row[Any]) -> DelegationRecord:
    return DelegationRecord(
        r.delegation_id, r.principal_id, r.on_behalf_of, r.scope_key, r.created_at, r.created_by
    )
