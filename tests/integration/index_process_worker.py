"""One process of ``test_index_concurrent_processes``: writes, rebuilds or reads in a shared home
until a deadline, then prints what it did and every failure as one JSON document.

Run as ``python index_process_worker.py ROLE HOME REPO PRINCIPALS_JSON SECONDS``.
"""

from __future__ import annotations

import json
import logging
import secrets
import sys
import time
import traceback
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from domain.errors import Conflict
from runtime import build_app
from service.authz import Caller
from service.settings import Settings
from tests.read_world import request


class _Failures(logging.Handler):
    """Warnings and errors of the index and the unit of work (e.g. a failed post-commit hook)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if "opened empty" not in message:  # the first catch-up of a new index says so
            self.messages.append(f"{record.name}: {message}")


def main() -> None:
    role, home, repo, principals, seconds = sys.argv[1:6]
    named = json.loads(principals).items()
    who = {name: Caller(principal, purpose="concurrency test") for name, principal in named}
    failures = _Failures()
    logging.getLogger().addHandler(failures)
    app = build_app(Settings(home=Path(home)), background=False)
    svc = app.service
    deadline = time.monotonic() + float(seconds)
    done: dict[str, Any] = {"role": role, "calls": 0, "busy": 0, "errors": [], "written": []}
    tag = secrets.token_hex(3)
    n = 0
    while time.monotonic() < deadline:
        n += 1
        try:
            if role == "writer":
                word = f"zq{tag}x{n}"
                body = f"# Note {n}\n\nalpha {word} words\n\n## More\n\nbeta {n}\n"
                out = svc.elements.create_element(
                    who["curator"], repo, title=f"Note {tag} {n}", body=body
                )
                done["written"].append([out.version.version_id, word])
                time.sleep(0.03)  # leave the rebuilders room: this is about overlap, not load
            elif role == "rebuilder":
                svc.index.index_rebuild(who["admin"])
                time.sleep(0.1)
            else:
                items = svc.reading.read_context(
                    who["agent"], request(repo, "alpha", selector="head")
                )
                status = svc.index.index_status(who["admin"], catch_up=False, background=True)
                health = svc.index.health()
                if not items.items and n > 3:
                    done["errors"].append("a read found nothing")
                if not (status.model_dump()["on_disk"] and health.ready):
                    done["errors"].append(f"not ready: {health}")
            done["calls"] += 1
        except Conflict:  # SQLite's single writer was busy: not the index's concern
            done["busy"] += 1
        except Exception:
            done["errors"].append(traceback.format_exc())
    app.close()
    done["errors"] += failures.messages
    print(json.dumps(done))


if __name__ == "__main__":
    main()
