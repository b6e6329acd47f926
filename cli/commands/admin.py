"""Administration: init, repositories, grants, tokens, legal hold."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cli import output
from cli.inputs import grant_scope
from cli.options import JsonFlag, Repo
from cli.session import redact, schema_head, session
from domain.permissions import DELEGATE

PANEL = "Setup and access"

repo_app = typer.Typer(help="Create and list repositories.", no_args_is_help=True)
token_app = typer.Typer(help="Bearer tokens for the network surfaces.", no_args_is_help=True)
hold_app = typer.Typer(
    help="Legal hold: no retirement or erasure while held.", no_args_is_help=True
)

Principal = Annotated[
    str, typer.Argument(metavar="PRINCIPAL", help="user:ID, agent:ID or service:ID.")
]
RoleArg = Annotated[
    str,
    typer.Argument(
        metavar="ROLE",
        help="reader, agent, curator, publisher, ingestor, auditor or admin; or delegate "
        "(with --for) to let PRINCIPAL act on behalf of another.",
    ),
]
ForOption = Annotated[
    str | None,
    typer.Option(
        "--for",
        metavar="PRINCIPAL",
        help="With the role delegate: whom PRINCIPAL may act for — a principal (user:alice), "
        "every principal of a kind (user:*, for a gateway) or anyone (*). Without a scope the "
        "delegation holds everywhere; its permissions stay the intersection of both.",
        show_default=False,
    ),
]
ScopeRepo = Annotated[
    str | None,
    typer.Option("--repo", metavar="TENANT/ORG/REPO", help="Scope: one repository."),
]
ScopeOrg = Annotated[
    str | None,
    typer.Option("--org", metavar="TENANT/ORG", help="Scope: every repository of an organization."),
]
ScopeTenant = Annotated[
    str | None, typer.Option("--tenant", metavar="TENANT", help="Scope: a whole tenant.")
]
ScopeGlobal = Annotated[bool, typer.Option("--global", help="Scope: everything.")]


def register(app: typer.Typer) -> None:
    """Attach this group's commands to the root app."""
    app.command("init", rich_help_panel=PANEL)(init)
    app.command("whoami", rich_help_panel=PANEL)(whoami)
    app.add_typer(repo_app, name="repo", rich_help_panel=PANEL)
    app.command("grant", rich_help_panel=PANEL)(grant)
    app.command("revoke", rich_help_panel=PANEL)(revoke)
    app.command("grants", rich_help_panel=PANEL)(grants)
    app.add_typer(token_app, name="token", rich_help_panel=PANEL)
    app.add_typer(hold_app, name="hold", rich_help_panel=PANEL)


def init(
    ctx: typer.Context,
    admin: Annotated[
        str | None,
        typer.Option(
            "--admin",
            metavar="PRINCIPAL",
            help="Make this principal the global administrator and save it in HOME/config.json "
            "as the default local principal.",
            show_default=False,
        ),
    ] = None,
    json_: JsonFlag = False,
) -> None:
    """Create HOME and the database (runs the migrations); idempotent."""
    s = session(ctx, json_)
    service = s.initialise()
    bootstrap = service.admin.bootstrap_admin(admin) if admin else None
    result: dict[str, Any] = {
        "home": str(s.home.resolve()),
        "database_url": redact(s.settings.resolved_database_url),
        "schema_revision": schema_head(),
        "admin": bootstrap,
        "config": str(s.save_principal(admin)) if admin else None,
    }
    s.emit(result, _show_init)


def _show_init(r: dict[str, Any]) -> None:
    output.line(f"initialised {r['home']} (schema {r['schema_revision']})")
    rows: list[tuple[str, Any]] = [("database", r["database_url"])]
    if r["admin"]:
        state = "created" if r["admin"]["created"] else "already present"
        rows += [
            ("admin", f"{r['admin']['principal_id']} ({state})"),
            ("config", f"{r['config']} (default principal)"),
        ]
    output.fields(rows)


def whoami(ctx: typer.Context, json_: JsonFlag = False) -> None:
    """Who you are to the service: principal, on behalf of whom, purpose, your grants (role,
    scope, clearance) and whether you are a global admin."""
    s = session(ctx, json_)
    s.emit(s.service.discovery.whoami(s.caller), _show_whoami)


def _show_whoami(w: dict[str, Any]) -> None:
    output.fields(
        [
            ("principal", w["principal_id"]),
            ("on behalf of", w["on_behalf_of"]),
            ("purpose", w["purpose"]),
            ("global admin", w["global_admin"]),
        ],
        indent=0,
    )
    output.table(
        w["grants"], [("role", "role"), ("scope", "scope"), ("clearance", "clearance")],
        empty="no grants",
    )  # fmt: skip
    output.table(
        w["delegations"], [("on_behalf_of", "may act for"), ("scope", "scope")],
        empty="no delegations: you act only for yourself",
    )  # fmt: skip


@repo_app.command("list")
def repo_list(ctx: typer.Context, json_: JsonFlag = False) -> None:
    """The repositories you may read: what you may do there, up to which classification you
    read, and whether a legal hold is on."""
    s = session(ctx, json_)
    s.emit(
        s.service.discovery.list_repositories(s.caller),
        lambda rows: output.table(
            [{**r, "actions": ",".join(r["actions"])} for r in rows],
            [
                ("repository_id", "repository"),
                ("read_clearance", "reads up to"),
                ("legal_hold", "legal hold"),
                ("actions", "you may"),
            ],
            empty="no repository you may read",
        ),
    )


@repo_app.command("create")
def repo_create(
    ctx: typer.Context,
    repo: Annotated[str, typer.Argument(metavar="TENANT/ORG/REPO", help="The new repository.")],
    json_: JsonFlag = False,
) -> None:
    """Create a repository (admin of its organization, tenant or everything)."""
    s = session(ctx, json_)
    s.emit(
        s.service.admin.create_repository(s.caller, repo),
        lambda r: output.line(f"created repository {r['repository_id']} at {r['created_at']}"),
    )


def grant(
    ctx: typer.Context,
    principal: Principal,
    role: RoleArg,
    repo: ScopeRepo = None,
    org: ScopeOrg = None,
    tenant: ScopeTenant = None,
    everything: ScopeGlobal = False,
    clearance: Annotated[
        str | None,
        typer.Option(
            "--clearance",
            metavar="LEVEL",
            help="Highest classification the grantee may see: public, internal (default), "
            "confidential or restricted.",
            show_default=False,
        ),
    ] = None,
    for_: ForOption = None,
    json_: JsonFlag = False,
) -> None:
    """Grant a role on one scope (give exactly one of --repo, --org, --tenant, --global); or,
    as `grant agent:coder delegate --for user:alice`, let agent:coder act on behalf of
    user:alice (an admin of the scope, or user:alice itself, may; acting for someone always
    takes the intersection of both principals' permissions)."""
    s = session(ctx, json_)
    scope = _scope(role, repo, org, tenant, everything)
    s.emit(
        s.service.admin.grant(s.caller, principal, role, scope, clearance, for_),
        _show_granted,
    )


def _show_granted(r: dict[str, Any]) -> None:
    if r.get("on_behalf_of"):
        output.line(f"{r['principal_id']} may act on behalf of {r['on_behalf_of']} on {r['scope']}")
    else:
        output.line(
            f"granted {r['role']} on {r['scope']} to {r['principal_id']} "
            f"(clearance {r['clearance']})"
        )


def _scope(
    role: str, repo: str | None, org: str | None, tenant: str | None, everything: bool
) -> str:
    """The scope flags given; a delegation without any holds everywhere."""
    if role.strip().lower() == DELEGATE and not (repo or org or tenant or everything):
        return "*"
    return grant_scope(repo, org, tenant, everything)


def revoke(
    ctx: typer.Context,
    principal: Principal,
    role: RoleArg,
    repo: ScopeRepo = None,
    org: ScopeOrg = None,
    tenant: ScopeTenant = None,
    everything: ScopeGlobal = False,
    for_: ForOption = None,
    json_: JsonFlag = False,
) -> None:
    """Remove a grant from one scope (one you could have made), or a delegation (delegate
    --for PRINCIPAL)."""
    s = session(ctx, json_)
    scope = _scope(role, repo, org, tenant, everything)
    s.emit(
        s.service.admin.revoke(s.caller, principal, role, scope, for_),
        lambda r: output.line(
            f"revoked {r['role']}"
            + (f" for {r['on_behalf_of']}" if r.get("on_behalf_of") else "")
            + f" on {r['scope']} from {r['principal_id']}"
        ),
    )


def grants(
    ctx: typer.Context,
    repo: ScopeRepo = None,
    org: ScopeOrg = None,
    tenant: ScopeTenant = None,
    everything: ScopeGlobal = False,
    json_: JsonFlag = False,
) -> None:
    """List the grants made on one scope (admin of that scope)."""
    s = session(ctx, json_)
    scope = grant_scope(repo, org, tenant, everything)
    s.emit(
        s.service.admin.list_grants(s.caller, scope),
        lambda rows: output.table(
            rows,
            [
                ("principal_id", "principal"),
                ("role", "role"),
                ("on_behalf_of", "for"),
                ("scope", "scope"),
                ("clearance", "clearance"),
                ("created_at", "granted at"),
                ("created_by", "by"),
            ],
            empty=f"no grants on {scope}",
        ),
    )


@token_app.command("create")
def token_create(ctx: typer.Context, principal: Principal, json_: JsonFlag = False) -> None:
    """Mint a bearer token for yourself (or anyone, as a global admin); shown only once."""
    s = session(ctx, json_)
    s.emit(s.service.tokens.create(s.caller, principal), _show_token)


def _show_token(r: dict[str, Any]) -> None:
    output.line(f"token {r['token_id']} for {r['principal_id']} (shown once; store it now):")
    output.line(r["token"])


@token_app.command("revoke")
def token_revoke(
    ctx: typer.Context,
    token_id: Annotated[str, typer.Argument(metavar="TOKEN_ID", help="The token's id (tok_…).")],
    json_: JsonFlag = False,
) -> None:
    """Revoke a token and every token minted with it (its owner or a global admin)."""
    s = session(ctx, json_)
    s.emit(
        s.service.tokens.revoke(s.caller, token_id),
        lambda r: output.line(f"revoked token {r['token_id']}"),
    )


@token_app.command("list")
def token_list(
    ctx: typer.Context,
    principal: Annotated[
        str | None,
        typer.Option(
            "--principal",
            metavar="PRINCIPAL",
            help="Whose tokens (a global admin only). Default: your own, or all for an admin.",
        ),
    ] = None,
    json_: JsonFlag = False,
) -> None:
    """List tokens, never their secrets: revoked ones too, with the token each was minted with."""
    s = session(ctx, json_)
    s.emit(
        s.service.tokens.list_tokens(s.caller, principal),
        lambda rows: output.table(
            [{**r, "state": "revoked" if r["revoked"] else "active"} for r in rows],
            [
                ("token_id", "token"),
                ("principal_id", "principal"),
                ("state", "state"),
                ("created_at", "created at"),
                ("created_by", "by"),
                ("parent_token_id", "parent"),
            ],
            empty="no tokens",
        ),
    )


@hold_app.command("set")
def hold_set(ctx: typer.Context, repo: Repo, json_: JsonFlag = False) -> None:
    """Place a legal hold on a repository (admin)."""
    s = session(ctx, json_)
    s.emit(s.service.admin.set_legal_hold(s.caller, repo, True), _show_hold)


@hold_app.command("release")
def hold_release(ctx: typer.Context, repo: Repo, json_: JsonFlag = False) -> None:
    """Release the legal hold of a repository (admin)."""
    s = session(ctx, json_)
    s.emit(s.service.admin.set_legal_hold(s.caller, repo, False), _show_hold)


@hold_app.command("status")
def hold_status(ctx: typer.Context, repo: Repo, json_: JsonFlag = False) -> None:
    """Whether a legal hold is on a repository (anyone who may read there)."""
    s = session(ctx, json_)
    s.emit(
        s.service.discovery.hold_status(s.caller, repo),
        lambda r: output.line(
            f"legal hold {'ON' if r['legal_hold'] else 'off'} for {r['repository_id']}"
        ),
    )


def _show_hold(r: dict[str, Any]) -> None:
    state = "set on" if r["legal_hold"] else "released for"
    output.line(f"legal hold {state} {r['repository_id']} at {r['changed_at']}")
