"""The shape of the discovery results (``service.admin.discovery``): who am I, which repositories
may I read, which elements are in one. The REST response models and the MCP output schemas, like
``service.results``."""

from __future__ import annotations

from pydantic import Field

from service.results import View


class WhoamiGrant(View):
    role: str
    scope: str = Field(description="*, TENANT, TENANT/ORG or TENANT/ORG/REPO.")
    clearance: str


class WhoamiDelegation(View):
    on_behalf_of: str = Field(description="Whom the caller may act for (a principal, user:* or *).")
    scope: str = Field(description="*, TENANT, TENANT/ORG or TENANT/ORG/REPO.")
    created_by: str


class Whoami(View):
    principal_id: str
    on_behalf_of: str | None = Field(
        description="Whom the caller acts for (permissions are the intersection of both)."
    )
    purpose: str | None
    claimed_roles: list[str] = Field(description="Roles the caller claimed; they only narrow.")
    global_admin: bool
    grants: list[WhoamiGrant] = Field(description="The caller's own grants (not its delegate's).")
    delegations: list[WhoamiDelegation] = Field(
        description="Whom the caller may act on behalf of, and where (its delegation grants)."
    )


class ReadableRepository(View):
    repository_id: str
    actions: list[str] = Field(description="What the caller may do there (read, propose, …).")
    read_clearance: str | None = Field(description="The highest classification the caller reads.")
    legal_hold: bool


class ElementRow(View):
    element_id: str
    title: str
    element_kind: str
    type_key: str
    source_kind: str
    classification: str
    head_version_id: str
    retired_at: str | None


class ElementPage(View):
    repository_id: str
    elements: list[ElementRow]
    next_cursor: str | None = Field(
        description="Pass as cursor for the next page; null on the last page."
    )
