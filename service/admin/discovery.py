"""Use cases: who am I, which repositories may I read, which elements are in one — the discovery
a new curator, operator or agent starts with. Everything is trimmed like any read: what the caller
may not read is not listed, not counted, not hinted at."""

from __future__ import annotations

from typing import Any

from domain.errors import InvalidArgument
from domain.permissions import Action
from service import results_ops as ro
from service.admin import discovery_results as rd
from service.authz import Caller, Permission, access_levels
from service.core import existing, repo_key
from service.kernel import Kernel, acting
from service.views import iso

MAX_PAGE = 200


class Discovery:
    """Listing what the caller may see."""

    def __init__(self, k: Kernel) -> None:
        self.k = k

    @acting
    def whoami(self, caller: Caller) -> rd.Whoami:
        """The caller as the service sees it: principal, on-behalf-of, purpose, its own grants
        (role, scope, clearance) and whether it is a global admin."""
        self.k.gate.check_caller(caller)
        with self.k.uow(readonly=True) as uow:
            grants = uow.store.grants_for([caller.principal_id])
            delegations = uow.store.delegations_of(caller.principal_id)
            admin = self.k.gate.permission(uow, caller, "*").can(Action.ADMIN)
        return rd.Whoami.model_validate(
            {
                "principal_id": caller.principal_id,
                "on_behalf_of": caller.on_behalf_of,
                "purpose": caller.purpose,
                "claimed_roles": list(caller.roles),
                "global_admin": admin,
                "grants": [
                    {"role": g.role, "scope": g.scope_key, "clearance": g.clearance}
                    for g in sorted(grants, key=lambda g: (g.scope_key, g.role))
                ],
                "delegations": [
                    {
                        "on_behalf_of": d.on_behalf_of,
                        "scope": d.scope_key,
                        "created_by": d.created_by,
                    }
                    for d in delegations
                ],
            }
        )

    @acting
    def list_repositories(self, caller: Caller) -> list[rd.ReadableRepository]:
        """The repositories the caller may read, with what it may do there and up to which
        classification it reads, and whether a legal hold is on."""
        with self.k.uow(readonly=True) as uow:
            out = []
            perms = self.k.gate.permissions(uow, caller, uow.store.list_repository_keys())
            for key, perm in perms.items():
                repo = uow.store.get_repository(key) if perm.can(Action.READ) else None
                if repo is None:
                    continue
                out.append(_repository_view(key, perm, repo.legal_hold))
        return [rd.ReadableRepository.model_validate(row) for row in out]

    @acting
    def hold_status(self, caller: Caller, repo: str) -> ro.HoldStatus:
        """Whether a legal hold is on the repository (anyone who may read there may ask)."""
        key = repo_key(repo)
        with self.k.uow(readonly=True) as uow:
            self.k.gate.repository(uow, caller, key, Action.READ)
            held = existing(uow.store.get_repository(key)).legal_hold
        return ro.HoldStatus(repository_id=key, legal_hold=held)

    @acting
    def list_elements(
        self, caller: Caller, repo: str, *, limit: int = 50, cursor: str | None = None
    ) -> rd.ElementPage:
        """A page of the repository's canonical pages and evidence the caller may read, in id
        order: id, title, kind, type, trust, classification, head, retired; ``next_cursor``
        continues (``None`` on the last page)."""
        key = repo_key(repo)
        if not 1 <= limit <= MAX_PAGE:
            raise InvalidArgument(f"limit must be 1-{MAX_PAGE}", field="limit")
        if cursor is not None and not cursor.startswith("el_"):
            raise InvalidArgument("cursor must be a next_cursor this call returned", field="cursor")
        with self.k.uow(readonly=True) as uow:
            perm = self.k.gate.repository(uow, caller, key, Action.READ)
            rows = uow.store.element_page(access_levels({key: perm}), cursor, limit + 1)
            self.k.audit.log_read(uow, caller, "element.list", key, cursor=cursor)
            uow.commit()
        page = rows[:limit]
        return rd.ElementPage.model_validate(
            {
                "repository_id": key,
                "elements": [_element_row(r) for r in page],
                "next_cursor": page[-1]["element_id"] if len(rows) > limit else None,
            }
        )


def _repository_view(key: str, perm: Permission, legal_hold: bool) -> dict[str, Any]:
    read = perm.clearance_for(Action.READ)
    return {
        "repository_id": key,
        "actions": sorted(a.value for a in perm.actions),
        "read_clearance": read.value if read else None,
        "legal_hold": legal_hold,
    }


def _element_row(r: dict[str, Any]) -> dict[str, Any]:
    return {
        "element_id": r["element_id"],
        "title": r["title"],
        "element_kind": r["element_kind"],
        "type_key": r["type_key"],
        "source_kind": r["source_kind"],
        "classification": r["classification"],
        "head_version_id": r["head_version_id"],
        "retired_at": iso(r["retired_at"]),
    }
