"""A registered source's token reaches the git host as an HTTP header — through git's
environment, never in the URL, the clone's config, an error message or the command line."""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from ingest.git_source import GitBacklogSource, GitSourceError

TOKEN = "ghp_never-in-a-file-or-a-message"


class _Recorder(BaseHTTPRequestHandler):
    seen: ClassVar[list[str | None]] = []

    def do_GET(self) -> None:
        type(self).seen.append(self.headers.get("Authorization"))
        self.send_response(404)
        self.end_headers()

    def log_message(self, *args: object) -> None:  # keep the test output clean
        pass


@pytest.fixture
def host() -> Iterator[str]:
    _Recorder.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/acme/backlog.git"
    finally:
        server.shutdown()
        server.server_close()


def test_the_token_is_sent_as_a_basic_authorization_header_and_stored_nowhere(
    host: str, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    with pytest.raises(GitSourceError) as refused:
        GitBacklogSource.open(host, cache_dir=cache, credential=TOKEN)
    expected = "Basic " + base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
    assert expected in _Recorder.seen
    assert TOKEN not in str(refused.value)
    leftovers = [p for p in cache.rglob("*") if p.is_file()] if cache.exists() else []
    assert all(TOKEN not in p.read_text(errors="replace") for p in leftovers)


def test_without_a_credential_no_authorization_is_sent_and_git_never_prompts(
    host: str, tmp_path: Path
) -> None:
    with pytest.raises(GitSourceError):
        GitBacklogSource.open(host, cache_dir=tmp_path / "cache")
    assert _Recorder.seen
    assert set(_Recorder.seen) == {None}
