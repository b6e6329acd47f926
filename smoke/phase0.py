"""Phase 0: the installation itself — the configured home (``--home`` / ``AMEIDE_HOME``, default
``./.ameide``, or ``--database-url``), when there is one, and the generated gRPC code.

- ``phase0.config``: the settings and ``HOME/config.json`` load (local defaults, ranking weights,
  the saved principal);
- ``phase0.migrations``: the database is at the Alembic head, and the code's recorded head is the
  migration scripts' head;
- ``phase0.index``: the keyword index is on disk and has applied every commit;
- ``phase0.generated-code``: the generated modules import, and regenerating them from ``proto/``
  changes nothing (``scripts/gen_proto.py``'s check, run in-process).

Phase 0 writes nothing to the configured database. A missing home is not an error (a fresh
checkout before ``ameide init``): the steps that need it are skipped and say so.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from domain.values import validate_principal
from service.settings import Settings
from smoke.runner import StepFailed, StepSkipped, expect

GENERATED = ("common", "governance", "knowledge", "projection")


def _redact(url: str) -> str:
    scheme, sep, rest = url.partition("://")
    if "@" in rest and ":" in rest.split("@", 1)[0]:
        user = rest.split("@", 1)[0].split(":", 1)[0]
        rest = f"{user}:***@{rest.split('@', 1)[1]}"
    return scheme + sep + rest


class Phase0:
    """The checks of the configured installation."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        # read before any step opens the app: opening it claims (and so creates) the directory
        self.index_missing = not settings.index_dir.is_dir()

    def steps(self) -> list[tuple[str, Callable[[], str]]]:
        """(name, run) in order."""
        return [
            ("config", self.config),
            ("migrations", self.migrations),
            ("index", self.index),
            ("generated-code", self.generated_code),
        ]

    @property
    def _sqlite_file(self) -> Path | None:
        if self.settings.database_url:
            return None
        return self.settings.home / "ameide.db"

    def _need_database(self) -> None:
        if self._sqlite_file is None:
            return
        if not self.settings.home.exists():
            raise StepSkipped(f"no configured home at {self.settings.home} (nothing to check)")
        if not self._sqlite_file.exists():
            raise StepFailed(f"not initialised: no database at {self._sqlite_file} (ameide init)")

    def config(self) -> str:
        """Settings and the home's config.json load; the saved principal is well formed."""
        home = self.settings.home
        url = _redact(self.settings.resolved_database_url)
        if not home.exists() and self._sqlite_file is not None:
            return f"no configured home at {home} yet; database would be {url}"
        path = home / "config.json"
        config: dict[str, Any] = {}
        if path.is_file():
            try:
                config = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise StepFailed(f"{path} is not valid JSON: {exc}") from None
            expect(isinstance(config, dict), f"{path} does not hold a JSON object")
        principal = config.get("principal")
        if principal is not None:
            validate_principal(principal, "config.json principal")
        from runtime import build_app  # validates config.json's ranking weights, opens nothing

        build_app(self.settings).close()
        return f"home {home}, database {url}, default principal {principal or '-'}"

    def migrations(self) -> str:
        """The database is at the head of the migration scripts."""
        from storage.migrate import head_revision
        from storage.revision import SCHEMA_REVISION, database_revision

        self._need_database()
        head = head_revision()
        expect(
            head == SCHEMA_REVISION,
            f"storage.revision.SCHEMA_REVISION is {SCHEMA_REVISION} but the migrations' head is "
            f"{head}",
        )
        current = database_revision(self.settings.resolved_database_url)
        expect(
            current == head,
            f"the database is at schema revision {current or 'none'}, the code needs {head} "
            "(ameide init migrates it)",
        )
        return f"database at head {head}"

    def index(self) -> str:
        """The configured home's keyword index exists and has applied every commit."""
        from runtime import build_app
        from storage.db import SqlAlchemyUnitOfWork

        self._need_database()
        index_dir = self.settings.index_dir
        app = build_app(self.settings)
        try:
            with SqlAlchemyUnitOfWork(app.engine, readonly=True) as uow:
                expected = uow.store.indexable_version_count()
            if self.index_missing:
                expect(
                    expected == 0,
                    f"the keyword index directory {index_dir} is missing but the database has "
                    f"{expected} versions to index (ameide index rebuild)",
                )
                return f"no index yet at {index_dir}: nothing to index"
            health = app.service.index.health()
        finally:
            app.close()
        index = health.index or {}
        expect(
            health.ready,
            f"the keyword index at {index_dir} is not ready: {index.get('indexed_versions')} of "
            f"{index.get('expected_versions')} versions indexed, {index.get('pending')} pending "
            "(ameide index status applies pending work; ameide index rebuild recomputes it)",
        )
        return f"index {index_dir}: {index.get('indexed_versions')} versions, consistent"

    def generated_code(self) -> str:
        """The generated gRPC modules import and are what ``proto/`` generates."""
        for name in GENERATED:
            for suffix in ("_pb2", "_pb2_grpc"):
                importlib.import_module(f"ameide_proto.v1.{name}{suffix}")
        import ameide_proto

        root = Path(ameide_proto.__file__).resolve().parent.parent
        script, protos = root / "scripts" / "gen_proto.py", root / "proto"
        if not script.is_file() or not protos.is_dir():
            raise StepSkipped(f"modules import; no proto sources next to {root} to regenerate from")
        if importlib.util.find_spec("grpc_tools") is None:
            raise StepSkipped("modules import; grpcio-tools is not installed (pip install .[dev])")
        spec = importlib.util.spec_from_file_location("ameide_gen_proto", script)
        assert spec is not None
        assert spec.loader is not None
        gen_proto = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(gen_proto)
        problems: list[str] = gen_proto.stale_files(root, protos)
        expect(
            not problems,
            "generated gRPC code is stale (" + "; ".join(problems[:4]) + "): run "
            "python scripts/gen_proto.py",
        )
        return f"{len(GENERATED) * 3} generated modules fresh against {protos}"
