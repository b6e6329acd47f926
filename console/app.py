"""The curator console: ``create_console(service)`` → an ASGI app the REST app mounts at ``/ui``.

Server-rendered HTML (Jinja2), plain forms, no JavaScript: every action works in any browser.
An adapter like the CLI and REST — each page calls ``MemoryService`` operations and renders
what they return; the service decides everything (who may see and do what, staleness,
compare-and-swap). Sign-in exchanges a bearer token for a session cookie (``console.session``).

    /sign-in, /sign-out           the session
    /                             repositories you may read, and what you may do in each
    /queue                        open proposals (``console.pages_review``)
    /proposals/{id}               diffs, merge preview, conflict blocks, accept / reject /
                                  rebase / revise, the proposer's withdraw
    /elements/{id}                versions, diffs, relationships, provenance, as_of
    /repos/{repo}/elements        a repository's elements, paged
    /repos/{repo}/baselines       list, create, diff, promote / roll back, pointer history
    /repos/{repo}/audit           history with filters, chain verification, CSV/JSON export
    /repos/{repo}/drift           drifted pages with evidence diffs, review / propose; gaps
    /context                      ask a question as yourself, see what an agent would get
"""

from __future__ import annotations

from typing import Annotated

from fastapi import FastAPI, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from console import pages_baselines, pages_drift, pages_elements, pages_history, pages_review
from console.session import (
    SESSION_COOKIE,
    SIGNIN_COOKIE,
    SessionStore,
    new_secret,
    same_secret,
)
from console.web import (
    TEMPLATES,
    ConsoleContext,
    CsrfRefused,
    PostedDep,
    SecurityHeaders,
    SignedDep,
    age,
    base,
    install_handlers,
    maybe_signed,
    render,
    see_other,
)
from domain.errors import AmeideError
from edge.results import as_json
from service.app import MemoryService


def create_console(service: MemoryService, *, sessions: SessionStore | None = None) -> FastAPI:
    """The console app over ``service`` (``sessions``: a store with a test clock, for tests)."""
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    templates = Jinja2Templates(directory=str(TEMPLATES))
    templates.env.filters["age"] = age
    app.state.console = ConsoleContext(service, sessions or SessionStore(), templates)
    app.mount("/static", StaticFiles(directory=str(TEMPLATES.with_name("static"))), "static")
    install_handlers(app)
    app.add_api_route("/", home, methods=["GET"], response_class=HTMLResponse)
    app.add_api_route("/sign-in", sign_in_page, methods=["GET"], response_class=HTMLResponse)
    app.add_api_route("/sign-in", sign_in, methods=["POST"])
    app.add_api_route("/sign-out", sign_out, methods=["POST"])
    for module in (pages_review, pages_elements, pages_baselines, pages_history, pages_drift):
        app.include_router(module.router)
    app.add_middleware(SecurityHeaders)
    return app


def home(request: Request, signed: SignedDep) -> Response:
    """The repositories the caller may read, with the actions the service allows there."""
    repos = as_json(signed.service.discovery.list_repositories(signed.caller))
    who = as_json(signed.service.discovery.whoami(signed.caller))
    return render(request, "home.html", signed, repos=repos, who=who)


def sign_in_page(request: Request, next: str = "/") -> Response:
    """The sign-in form; its double-submit cookie guards the form itself."""
    token = new_secret()
    response = render(
        request, "sign_in.html", maybe_signed(request), next=_local(next), signin_csrf=token
    )
    _cookie(request, response, SIGNIN_COOKIE, token, max_age=600)
    return response


def sign_in(
    request: Request,
    token: Annotated[str, Form()],
    signin_csrf: Annotated[str | None, Form()] = None,
    next: Annotated[str, Form()] = "/",
    purpose: Annotated[str | None, Form()] = None,
) -> Response:
    """Exchange a bearer token for a session cookie (the token is checked by the service)."""
    if not same_secret(signin_csrf, request.cookies.get(SIGNIN_COOKIE) or ""):
        raise CsrfRefused
    ctx: ConsoleContext = request.app.state.console
    try:
        who = ctx.service.tokens.authenticate(token.strip())
    except AmeideError as exc:
        fresh = new_secret()
        response = render(
            request,
            "sign_in.html",
            None,
            401,
            next=_local(next),
            signin_csrf=fresh,
            error=exc.message,
        )
        _cookie(request, response, SIGNIN_COOKIE, fresh, max_age=600)
        return response
    session_id, _ = ctx.sessions.open(
        token.strip(), who.principal_id, (purpose or "").strip() or None
    )
    onward = see_other(request, _local(next))
    _cookie(request, onward, SESSION_COOKIE, session_id)
    onward.delete_cookie(SIGNIN_COOKIE, path=base(request) or "/")
    return onward


def sign_out(request: Request, signed: PostedDep) -> Response:
    """End the session and forget the cookie."""
    ctx: ConsoleContext = request.app.state.console
    ctx.sessions.close(request.cookies.get(SESSION_COOKIE))
    response: Response = RedirectResponse(base(request) + "/sign-in", 303)
    response.delete_cookie(SESSION_COOKIE, path=base(request) or "/")
    return response


def _local(target: str) -> str:
    """A console path to go on to after signing in, never another site."""
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


def _cookie(
    request: Request, response: Response, name: str, value: str, max_age: int | None = None
) -> None:
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        path=base(request) or "/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
