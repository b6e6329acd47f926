"""Settings of the MCP adapter (``AMEIDE_MCP_`` environment prefix), read once by the entrypoint."""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class McpSettings(BaseSettings):
    """How the MCP tools are published and who may reach the HTTP transport."""

    model_config = SettingsConfigDict(env_prefix="AMEIDE_MCP_", extra="ignore")

    tool_names: Literal["dotted", "underscore"] = Field(
        default="dotted",
        description="dotted publishes memory.get_context, …; underscore publishes "
        "memory_get_context, … for clients that reject dots in tool names.",
    )
    allowed_origins: list[str] = Field(
        default_factory=list,
        description="Browser origins allowed besides loopback ones (JSON list, e.g. "
        '["https://app.example.com"]); ":*" matches any port.',
    )
    allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Host headers accepted besides loopback ones (DNS-rebinding protection).",
    )
    path: str = Field(default="/mcp", description="Where the Streamable HTTP endpoint lives.")
