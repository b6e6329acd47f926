"""Settings, read once per process in the entrypoint (``AMEIDE_`` environment prefix)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Where state lives and who the local principal is."""

    model_config = SettingsConfigDict(env_prefix="AMEIDE_", extra="ignore")

    home: Path = Field(default=Path(".ameide"), description="embedded state directory")
    database_url: str | None = Field(
        default=None, description="SQLAlchemy URL; default SQLite in home"
    )
    principal: str | None = Field(default=None, description="local principal (CLI, MCP stdio)")
    index_path: Path | None = Field(
        default=None,
        validation_alias="AMEIDE_INDEX_DIR",
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
