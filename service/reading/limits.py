"""The caps and defaults of a read (docs/product.md §4), as plain numbers.

``service.reading.request`` applies them to every request; they live apart, with no import, so a
surface that shows them (a CLI option's default, an MCP input schema) can name them without
loading the request model — the CLI's ``--help`` stays fast.
"""

MAX_ITEMS = 50
MAX_CHARS = 100_000
MAX_HOPS = 3
MAX_NODES = 100
MAX_QUERY_CHARS = 1_000
MAX_IDS = 100

DEFAULT_MAX_ITEMS = 8
DEFAULT_MAX_CHARS = 6000
DEFAULT_HOPS = 0
DEFAULT_MAX_NODES = 20
DEFAULT_NEIGHBOURHOOD_HOPS = 1
"""``neighborhood`` walks at least one hop."""
