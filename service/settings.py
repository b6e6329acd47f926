"""Settings, read once per process in the entrypoint (``AMEIDE_`` environment prefix)."""

from __future__ import annotations

from pathlib import Path

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

    @property
    def resolved_database_url(self) -> str:
        """The configured URL, or the embedded SQLite file under ``home``."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.home / 'ameide.db').resolve()}"

    @property
    def index_dir(self) -> Path:
        """Where the derived keyword index lives."""
        return self.home / "index"
