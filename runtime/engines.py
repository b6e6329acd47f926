"""Which keyword index engine a process uses: ``whoosh`` (pure Python) or ``tantivy`` (Rust).

Chosen by ``AMEIDE_INDEX_ENGINE``, else by ``index.engine`` in the home's ``config.json``, else
:data:`DEFAULT_ENGINE`. Each engine keeps its own files — Whoosh's in the index directory itself
(where they always were), tantivy's in its ``tantivy/`` subdirectory — with its own watermark,
so switching engines never reads the other's files: an engine's index that was never built (or
is behind the outbox's retention) is rebuilt from the database by the first catch-up, and one
used before catches up from its own watermark. Processes sharing a home may even use different
engines: each keeps its index from the same outbox.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from domain.errors import InvalidArgument
from projection.keyword_index import KeywordIndex
from service.settings import Settings

ENGINES = ("whoosh", "tantivy")
DEFAULT_ENGINE = "whoosh"


def index_engine(settings: Settings, config: Mapping[str, Any]) -> str:
    """The engine's name: the environment's, else the config file's, else the default."""
    section = config.get("index")
    configured = section.get("engine") if isinstance(section, Mapping) else None
    name = settings.index_engine or configured or DEFAULT_ENGINE
    if name not in ENGINES:
        source = "AMEIDE_INDEX_ENGINE" if settings.index_engine else "index.engine in config.json"
        raise InvalidArgument(
            f"{source} is {name!r}: the keyword index engine is one of {', '.join(ENGINES)}",
            field="index.engine",
        )
    return str(name)


def engine_directory(settings: Settings, engine: str) -> Path:
    """Where ``engine`` keeps its files: Whoosh in the index directory, tantivy in its
    ``tantivy/`` subdirectory (removing the index directory removes both)."""
    return settings.index_dir / "tantivy" if engine == "tantivy" else settings.index_dir


def keyword_index_opener(
    settings: Settings, config: Mapping[str, Any]
) -> Callable[[], KeywordIndex]:
    """What opens the configured engine's index (imported only when chosen)."""
    engine = index_engine(settings, config)
    if engine == "tantivy":

        def open_tantivy() -> KeywordIndex:
            from projection.tantivy import TantivyKeywordIndex

            return TantivyKeywordIndex(engine_directory(settings, "tantivy"))

        return open_tantivy

    def open_whoosh() -> KeywordIndex:
        from projection.whoosh import WhooshKeywordIndex

        return WhooshKeywordIndex(engine_directory(settings, "whoosh"))

    return open_whoosh
