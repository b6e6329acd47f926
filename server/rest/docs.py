"""``/docs`` (Swagger UI) and ``/favicon.ico``, served from installed packages, never a CDN.

FastAPI's default ``/docs`` page loads Swagger UI's script and stylesheet from a CDN (with no
subresource integrity), so it is blank offline and trusts a third party. Here the page is
FastAPI's own ``get_swagger_ui_html`` (its self-hosting recipe) pointed at the ``swagger-ui-dist``
files that the ``fastapi-offline`` wheel ships (``fastapi_offline/static``), mounted read-only
under ``/docs/assets``. ReDoc is not offered. ``/favicon.ico`` is that wheel's icon (a PNG)
wrapped in an ICO container, so browsers stop asking for it with a 404.
"""

from __future__ import annotations

import struct
from functools import cache
from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles

DOCS = "/docs"
ASSETS = "/docs/assets"
OAUTH2_REDIRECT = "/docs/oauth2-redirect"
ICO_TYPE = "image/vnd.microsoft.icon"


def assets_dir() -> Path:
    """The directory of Swagger UI's ``swagger-ui-bundle.js``, ``swagger-ui.css`` and the icon."""
    return Path(str(files("fastapi_offline") / "static"))


@cache
def favicon_ico() -> bytes:
    """The PNG icon in a one-image ICO container (ICONDIR + ICONDIRENTRY + PNG, as Windows
    Vista and every browser read it)."""
    png = (assets_dir() / "favicon.png").read_bytes()
    width, height = struct.unpack(">II", png[16:24])  # the IHDR chunk
    header = struct.pack("<HHH", 0, 1, 1)  # reserved, type 1 = icon, one image
    entry = struct.pack(
        "<BBBBHHII", width % 256, height % 256, 0, 0, 1, 32, len(png), 6 + 16
    )  # 256 is written as 0
    return header + entry + png


def install_docs(app: FastAPI) -> None:
    """Add ``/docs``, its OAuth2 redirect page, its assets and ``/favicon.ico`` to ``app``
    (created with ``docs_url=None``)."""
    app.mount(ASSETS, StaticFiles(directory=assets_dir()), name="docs-assets")

    @app.get(DOCS, include_in_schema=False)
    def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=f"{root}{app.openapi_url}",
            title=f"{app.title} - Swagger UI",
            oauth2_redirect_url=f"{root}{OAUTH2_REDIRECT}",
            swagger_js_url=f"{root}{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{root}/favicon.ico",
        )

    @app.get(OAUTH2_REDIRECT, include_in_schema=False)
    def swagger_ui_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> Response:
        return Response(
            favicon_ico(),
            media_type=ICO_TYPE,
            headers={"Cache-Control": "public, max-age=86400"},
        )
