"""A real headless Chromium (Debian's ``chromium`` and ``chromium-driver``) driven by Selenium.

``make browser`` (a prerequisite of ``make pytest``) installs both packages when
``/usr/bin/chromium`` is missing; nothing is downloaded by Selenium (the driver's path is given,
so Selenium Manager never runs). Without them the browser tests skip saying so — except under
``CI=true``, where they fail. Screenshots go to ``tmp/artefacts/console/`` (``AMEIDE_ARTEFACTS``
moves it).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.wait import WebDriverWait

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path(os.environ.get("AMEIDE_CHROMIUM", "/usr/bin/chromium"))
CHROMEDRIVER = Path(os.environ.get("AMEIDE_CHROMEDRIVER", "/usr/bin/chromedriver"))
ARTEFACTS = Path(os.environ.get("AMEIDE_ARTEFACTS", ROOT / "tmp" / "artefacts")) / "console"


def require_browser() -> None:
    """Skip (or, under CI=true, fail) when Chromium or its driver is not installed."""
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    if missing:
        reason = f"headless Chromium is not installed ({', '.join(missing)}): run `make browser`"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}: CI must run the browser tests")
        pytest.skip(reason)


def start_chromium() -> WebDriver:
    """Headless Chromium at a laptop's window size."""
    options = Options()
    options.binary_location = str(CHROMIUM)
    for arg in (
        "--headless=new",
        "--no-sandbox",  # tests run as root in containers
        "--disable-dev-shm-usage",
        "--window-size=1366,900",
        "--disable-gpu",
        "--no-first-run",
    ):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=str(CHROMEDRIVER)))
    driver.implicitly_wait(0)
    return driver


@pytest.fixture(scope="module")
def chromium() -> Iterator[WebDriver]:
    """One browser per test module; each test starts with no cookies."""
    require_browser()
    driver = start_chromium()
    try:
        yield driver
    finally:
        driver.quit()


def _replaced(element: WebElement) -> bool:
    """Whether ``element``'s document was replaced (Selenium's ``staleness_of``, also taking
    the error Chromium gives when asked about a node mid-navigation — "Node with given id does
    not belong to the document" — for the staleness it is, instead of failing the test)."""
    try:
        element.is_enabled()
    except StaleElementReferenceException:
        return True
    except WebDriverException as exc:
        if "does not belong to the document" in str(exc):
            return True
        raise
    return False


@dataclass
class Browser:
    """The console in the browser: navigate, fill, click, look, take screenshots."""

    driver: WebDriver
    base: str  # http://127.0.0.1:PORT

    def go(self, path: str) -> None:
        """Open a console path (``/ui/…``)."""
        self.driver.get(self.base + path)

    @property
    def path(self) -> str:
        """The current URL without the server."""
        return self.driver.current_url.removeprefix(self.base)

    def find(self, css: str) -> WebElement:
        """The one element ``css`` selects."""
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def all(self, css: str) -> list[WebElement]:
        """Every element ``css`` selects."""
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def text(self, css: str = "main") -> str:
        """The visible text of an element."""
        return self.find(css).text

    def fill(self, css: str, value: str) -> None:
        """Type into a field (cleared first)."""
        field = self.find(css)
        field.clear()
        field.send_keys(value)

    def press(self, label: str) -> None:
        """Click the button with this visible label (a form submits; the page loads)."""
        buttons = [b for b in self.all("button") if b.text.strip() == label]
        assert buttons, f"no button {label!r} on {self.path}: {self.text()[:400]}"
        self.submit(lambda: buttons[0].click())

    def submit(self, action: Callable[[], object]) -> None:
        """Do ``action`` and wait until the browser has loaded the page it leads to."""
        old = self.find("html")
        action()
        WebDriverWait(self.driver, 20).until(lambda _: _replaced(old))
        WebDriverWait(self.driver, 20).until(
            lambda d: d.execute_script("return document.readyState") == "complete"
        )

    def post_form(self, action: str, fields: dict[str, str]) -> None:
        """Post a form the page did not offer (a forgery), from the console's own origin."""
        script = (
            "const f = document.createElement('form'); f.method = 'post'; f.action = arguments[0];"
            "for (const [k, v] of Object.entries(arguments[1])) {"
            " const i = document.createElement('input'); i.type = 'hidden';"
            " i.name = k; i.value = v; f.appendChild(i); }"
            "document.body.appendChild(f); f.submit();"
        )
        self.submit(lambda: self.driver.execute_script(script, action, fields))

    def sign_in(self, token: str) -> None:
        """Sign in through the form."""
        self.driver.delete_all_cookies()
        self.go("/ui/sign-in")
        self.fill("#token", token)
        self.press("Sign in")
        assert "Signed in as" in self.text("header"), self.text()

    def sign_out(self) -> None:
        """The header's sign-out button."""
        self.press("Sign out")
        assert self.path.startswith("/ui/sign-in"), self.path

    def shot(self, name: str, *, full: bool = True) -> Path:
        """A screenshot under the artefacts directory: the whole page, or what a laptop's
        window shows (``full=False``)."""
        ARTEFACTS.mkdir(parents=True, exist_ok=True)
        if full:
            height = self.driver.execute_script("return document.body.scrollHeight")
            self.driver.set_window_size(1366, max(900, min(int(height) + 40, 6000)))
        path = ARTEFACTS / f"{name}.png"
        assert self.driver.save_screenshot(str(path)), f"no screenshot {path}"
        self.driver.set_window_size(1366, 900)
        return path
