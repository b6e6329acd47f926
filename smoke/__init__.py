"""``ameide test``: the reference scenario (product.md §9) end to end against an embedded instance
or a running server. Filled by the surfaces issue."""
