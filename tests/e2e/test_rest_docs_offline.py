"""Issue 30 §3 defect 5: ``/docs`` renders with no network but the server's own (Swagger UI's
files come from the installed package, not a CDN), and ``/favicon.ico`` answers.

The browser is a real headless Chromium whose every name but the loopback address resolves to
nothing and whose every request but loopback goes to a dead proxy: a page that needs a CDN
stays blank there.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

import httpx2
import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.wait import WebDriverWait

from server.rest.app import create_app
from tests.conftest import World
from tests.e2e.browser_harness import CHROMEDRIVER, CHROMIUM, require_browser
from tests.e2e.rest_harness import running

OFFLINE = (
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",  # no name resolves
    "--proxy-server=http://127.0.0.1:9",  # the discard port: nothing answers there
    "--proxy-bypass-list=127.0.0.1",  # … but the server under test
)


@pytest.fixture(scope="module")
def offline_chromium() -> Iterator[WebDriver]:
    """Headless Chromium cut off from every host but 127.0.0.1."""
    require_browser()
    options = Options()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--no-first-run", "--window-size=1366,900", *OFFLINE):  # fmt: skip
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=str(CHROMEDRIVER)))
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def base(world: World) -> Iterator[str]:
    with running(create_app(world.svc, settings=world.app.settings)) as url:
        yield url


def test_the_offline_browser_reaches_nothing_but_loopback(offline_chromium: WebDriver) -> None:
    """The premise of the next test: a CDN script never loads in this browser."""
    offline_chromium.get("about:blank")
    loaded = offline_chromium.execute_async_script(
        "const done = arguments[0]; const s = document.createElement('script');"
        "s.src = 'https://cdn.jsdelivr.net/npm/swagger-ui-dist@5/swagger-ui-bundle.js';"
        "s.onload = () => done('loaded'); s.onerror = () => done('failed');"
        "document.head.appendChild(s);"
    )
    assert loaded == "failed"


def test_docs_render_in_a_browser_with_the_network_blocked(
    offline_chromium: WebDriver, base: str
) -> None:
    offline_chromium.get(f"{base}/docs")
    WebDriverWait(offline_chromium, 20).until(
        lambda d: len(d.find_elements(By.CSS_SELECTOR, ".opblock")) > 20
    )
    summaries = [e.text for e in offline_chromium.find_elements(By.CSS_SELECTOR, ".opblock")]
    assert any("/v1/context" in text for text in summaries), summaries[:5]
    title = offline_chromium.find_element(By.CSS_SELECTOR, ".info .title").text
    assert "Ameide Memory" in title
    resources = offline_chromium.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)"
    )
    assert resources, "the page loaded its script, stylesheet and the OpenAPI document"
    assert all(name.startswith(base) for name in resources), resources


def test_the_docs_page_names_only_local_assets_and_the_favicon_is_an_icon(base: str) -> None:
    page = httpx2.get(f"{base}/docs", timeout=10)
    assert page.status_code == 200
    assert "cdn" not in page.text, page.text
    assert "https://" not in page.text, page.text
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css"):
        got = httpx2.get(f"{base}/docs/assets/{asset}", timeout=10)
        assert got.status_code == 200, asset
        assert len(got.content) > 10_000, asset
    icon = httpx2.get(f"{base}/favicon.ico", timeout=10)
    assert icon.status_code == 200
    assert icon.headers["content-type"] == "image/vnd.microsoft.icon"
    reserved, kind, count = struct.unpack("<HHH", icon.content[:6])
    assert (reserved, kind, count) == (0, 1, 1)
    size, offset = struct.unpack("<II", icon.content[14:22])
    assert icon.content[offset : offset + 8] == b"\x89PNG\r\n\x1a\n"
    assert offset + size == len(icon.content)
    assert httpx2.head(f"{base}/favicon.ico", timeout=10).status_code == 200
