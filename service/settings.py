"""Settings, read once per process in the entrypoint (``AMEIDE_`` environment prefix)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

ENV_PREFIX = "AMEIDE_"
VARIABLES = {"index_path": "AMEIDE_INDEX_DIR"}
"""The fields whose variable is not the prefix and their name."""


class Settings(BaseModel):
    """Where state lives and who the local principal is.

    A field not given is read from its environment variable (``AMEIDE_`` and the field's name
    in any case; ``index_path`` from ``AMEIDE_INDEX_DIR``); one given, even as None, wins.
    Plain pydantic: pydantic-settings' sources (dotenv, the secrets and cloud providers) cost
    every command ~40 ms of start-up for two variables."""

    model_config = ConfigDict(extra="ignore")

    home: Path = Field(default=Path(".ameide"), description="embedded state directory")
    database_url: str | None = Field(
        default=None, description="SQLAlchemy URL; default SQLite in home"
    )
    principal: str | None = Field(default=None, description="local principal (CLI, MCP stdio)")
    index_path: Path | None = Field(
        default=None,
        description="keyword index directory; default under home, one per database",
    )
    index_engine: str | None = Field(
        default=None,
        description="keyword index engine: tantivy or whoosh (default: config.json's index.engine, "
        "else tantivy)",
    )
    node_id: str | None = Field(
        default=None,
        description="this node's name in its index directory's owner.json (default: the host "
        "name); processes of one node may share an index directory, two nodes never",
    )

    semantic: Literal["auto", "on", "off"] = Field(
        default="auto",
        description="semantic recall: auto (on when its packages are installed: they are "
        "dependencies, so on by default), on (insist), off (keyword-only reads)",
    )

    @model_validator(mode="before")
    @classmethod
    def _from_environment(cls, given: Any) -> Any:
        if not isinstance(given, dict):
            return given
        env = {k.upper(): v for k, v in os.environ.items() if k.upper().startswith(ENV_PREFIX)}
        found = dict(given)
        for name in cls.model_fields:
            value = env.get(VARIABLES.get(name, ENV_PREFIX + name.upper()))
            if name not in found and value is not None:
                found[name] = value
        return found

    @property
    def resolved_database_url(self) -> str:
        """The configured URL, or the embedded SQLite file under ``home``."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.home / 'ameide.db').resolve()}"

    @property
    def index_dir(self) -> Path:
        """Where the derived keyword index lives: one directory per database, so two databases
        never share (and corrupt) one index."""
        if self.index_path is not None:
            return self.index_path
        if not self.database_url:
            return self.home / "index"
        digest = hashlib.sha256(self.database_url.encode("utf-8")).hexdigest()[:12]
        return self.home / f"index-{digest}"

    @property
    def vectors_dir(self) -> Path:
        """Where the derived embedding index lives: beside the keyword index (one per
        database too)."""
        return self.index_dir.with_name(f"{self.index_dir.name}-vectors")
