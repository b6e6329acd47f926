"""What every console page shares: the signed-in caller, the CSRF check, rendering, errors.

A page handler is a plain ``def`` (FastAPI runs it in its thread pool, like the REST
endpoints): it takes ``Signed`` (the session's ``Caller``) or ``Posted`` (the same, after the
form's CSRF token was checked), calls ``MemoryService`` operations and renders a template.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote, urlencode

from fastapi import Depends, Form, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from console.session import SESSION_COOKIE, Session, SessionStore, same_secret
from domain.errors import AmeideError, InvalidArgument, NotFound
from domain.values import parse_instant
from edge.callers import resolve_caller
from edge.errors import problems, rule_for
from service.app import MemoryService
from service.authz import Caller

TOOL_ID = "ameide-console"
TEMPLATES = Path(__file__).with_name("templates")
PAGE_SIZE = 25
CSRF_CODE = "PERMISSION_DENIED"
MALFORMED_INSTANT = "{name}: unreadable instant {text!r}; write e.g. 2026-01-31T12:00:00Z"


@dataclass(frozen=True)
class ConsoleContext:
    """What ``create_console`` hands every request (kept in ``app.state.console``)."""

    service: MemoryService
    sessions: SessionStore
    templates: Jinja2Templates


class SignInRequired(Exception):
    """No live session: the browser is sent to the sign-in page."""


class CsrfRefused(Exception):
    """A form without the session's CSRF token: refused with 403, nothing done."""


@dataclass(frozen=True)
class Signed:
    """A request from a signed-in browser."""

    caller: Caller
    session: Session
    service: MemoryService


def context_of(request: Request) -> ConsoleContext:
    """The console's context."""
    ctx: ConsoleContext = request.app.state.console
    return ctx


def signed_in(request: Request) -> Signed:
    """The session's caller; its token is checked again, so revoking it signs the browser out."""
    ctx = context_of(request)
    session = ctx.sessions.get(request.cookies.get(SESSION_COOKIE))
    if session is None:
        raise SignInRequired
    try:
        caller = resolve_caller(
            ctx.service.tokens.authenticate,
            token=session.token,
            local_principal=None,
            roles=None,
            on_behalf_of=None,
            purpose=session.purpose,
            tool_id=TOOL_ID,
        )
    except AmeideError:
        ctx.sessions.close(request.cookies.get(SESSION_COOKIE))
        raise SignInRequired from None
    request.state.principal = caller.principal_id
    return Signed(caller, session, ctx.service)


def maybe_signed(request: Request) -> Signed | None:
    """The signed-in caller when there is one (error pages keep the header's sign-out)."""
    try:
        return signed_in(request)
    except SignInRequired:
        return None


def posted(
    signed: Annotated[Signed, Depends(signed_in)],
    csrf_token: Annotated[str | None, Form()] = None,
) -> Signed:
    """A signed-in form post carrying the session's CSRF token (else ``CsrfRefused``)."""
    if not same_secret(csrf_token, signed.session.csrf):
        raise CsrfRefused
    return signed


SignedDep = Annotated[Signed, Depends(signed_in)]
PostedDep = Annotated[Signed, Depends(posted)]
OptionalText = Annotated[str | None, Form()]


def instant(value: str | None, name: str) -> datetime | None:
    """An instant typed into a form (ISO-8601 with a zone, as on every surface); blank: none."""
    if not value or not value.strip():
        return None
    return parse_instant(value, name, field=name, malformed=MALFORMED_INSTANT)


def age(created_at: str | None, now: datetime | None = None) -> str:
    """How long ago an ISO instant was, in the largest whole unit (``3 h``)."""
    if not created_at:
        return ""
    then = datetime.fromisoformat(created_at)
    seconds = max(0, int(((now or datetime.now(UTC)) - then).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds // size} {unit}"
    return f"{seconds} s"


def base(request: Request) -> str:
    """Where the console is mounted (``/ui``)."""
    return str(request.scope.get("root_path", "")).rstrip("/")


def render(
    request: Request,
    template: str,
    signed: Signed | None,
    status_code: int = 200,
    **values: Any,
) -> HTMLResponse:
    """A page, with the base path, the caller and the CSRF token every form carries."""
    values.update(
        base=base(request),
        principal=signed.caller.principal_id if signed else None,
        csrf=signed.session.csrf if signed else None,
    )
    return context_of(request).templates.TemplateResponse(
        request, template, values, status_code=status_code
    )


def see_other(request: Request, path: str, **query: str | None) -> RedirectResponse:
    """Post/redirect/get: 303 to a console path (``query`` without empty values)."""
    params = urlencode({k: v for k, v in query.items() if v})
    return RedirectResponse(base(request) + path + (f"?{params}" if params else ""), 303)


def error_page(request: Request, signed: Signed | None, error: AmeideError) -> HTMLResponse:
    """An error of the taxonomy as a page, with the status every surface gives it."""
    return render(
        request,
        "error.html",
        signed,
        rule_for(error).http_status,
        code=error.code,
        message=error.message,
    )


SECURITY_HEADERS = (
    (b"content-security-policy", b"default-src 'self'; frame-ancestors 'none'; form-action 'self'"),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
)


class SecurityHeaders:
    """Pages that decide things must not be framed (clickjacking), cached or leak referrers."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers if scope["type"] == "http" else send)


def install_handlers(app: Any) -> None:
    """Errors as pages: sign-in redirects, 403 for a missing CSRF token, the taxonomy's codes."""

    def sign_in(request: Request, _: Exception) -> Response:
        target = request.url.path.removeprefix(base(request)) or "/"
        if request.url.query:
            target += "?" + request.url.query
        if request.method != "GET":
            target = "/"
        return RedirectResponse(f"{base(request)}/sign-in?next={quote(target)}", 303)

    def csrf(request: Request, _: Exception) -> Response:
        message = "the form's CSRF token is missing or wrong: reload the page and try again"
        return render(
            request, "error.html", maybe_signed(request), 403, code=CSRF_CODE, message=message
        )

    def ameide(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, AmeideError)
        return error_page(request, maybe_signed(request), exc)

    def invalid(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        lines = problems(exc.errors(), limit=5)
        error = InvalidArgument("; ".join(lines) or "invalid request")
        return error_page(request, maybe_signed(request), error)

    def missing(request: Request, _: Exception) -> Response:
        return error_page(request, maybe_signed(request), NotFound("no such page"))

    app.add_exception_handler(SignInRequired, sign_in)
    app.add_exception_handler(CsrfRefused, csrf)
    app.add_exception_handler(AmeideError, ameide)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(404, missing)
