"""Which keyword index engine a process uses: the registry (one entry per engine).

Chosen by ``AMEIDE_INDEX_ENGINE``, else by ``index.engine`` in the home's ``config.json``, else
:data:`DEFAULT_ENGINE` (``tantivy``; ``whoosh`` is the pure-Python option). Adding an engine is
one package under ``projection/`` (a subclass of ``projection.generational.GenerationalIndex``
implementing the ``KeywordIndex`` port) plus one :data:`ENGINES` entry; nothing else names it.

Each engine keeps its own files — Whoosh's in the index directory itself (where they always
were), every other engine's in its subdirectory — with its own ``state.json`` and watermark, so
switching engines never reads the other's files. An engine's index that was never built is
rebuilt from the database by the first catch-up (a server starts it in the background at once,
see :func:`other_engines_indexes`); one used before catches up from its own watermark.
Processes sharing a home may even use different engines: each keeps its index from the same
outbox.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from domain.errors import InvalidArgument
from projection.generations import STATE
from projection.keyword_index import KeywordIndex
from service.settings import Settings


@dataclass(frozen=True)
class Engine:
    """A registry entry: where the engine's class is (imported only when chosen: start-up never
    loads an engine it does not use) and the subdirectory of the index directory it keeps its
    files in (``""``: the index directory itself)."""

    factory: str
    """``module:Class``, a class taking the engine's directory."""
    subdirectory: str


ENGINES: Mapping[str, Engine] = {
    "tantivy": Engine("projection.tantivy:TantivyKeywordIndex", "tantivy"),
    "whoosh": Engine("projection.whoosh:WhooshKeywordIndex", ""),
}
DEFAULT_ENGINE = "tantivy"


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
    """Where ``engine`` keeps its files (removing the index directory removes every engine's)."""
    subdirectory = ENGINES[engine].subdirectory
    return settings.index_dir / subdirectory if subdirectory else settings.index_dir


def other_engines_indexes(settings: Settings, engine: str) -> list[str]:
    """The other engines that have an index in this home while ``engine`` has none yet: the
    home was kept by another engine (e.g. Whoosh, the default before tantivy), so ``engine``'s
    index must be built from the database before it can answer."""
    if (engine_directory(settings, engine) / STATE).is_file():
        return []
    return [
        name
        for name in ENGINES
        if name != engine and (engine_directory(settings, name) / STATE).is_file()
    ]


def keyword_index_opener(
    settings: Settings, config: Mapping[str, Any]
) -> Callable[[], KeywordIndex]:
    """What opens the configured engine's index (its package imported on the first open)."""
    engine = index_engine(settings, config)
    module_name, class_name = ENGINES[engine].factory.split(":")
    directory = engine_directory(settings, engine)

    def open_index() -> KeywordIndex:
        index_class = getattr(importlib.import_module(module_name), class_name)
        opened: KeywordIndex = index_class(directory)
        return opened

    return open_index
