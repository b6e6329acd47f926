"""The relationship types an ingest writes for links, as plain names: the read side ranks by
them without loading the ingest's planning (``ingest.links.resolve`` re-exports them)."""

LINK_TYPE = "ameide:ingest.links_to"
SUPERSEDES_TYPE = "ameide:lifecycle.supersedes"
"""A ``SUPERSEDES`` relationship stated by its source: "Supersedes: <target>"."""
SUPERSEDED_BY_TYPE = "ameide:lifecycle.superseded_by"
"""A ``SUPERSEDES`` relationship stated by the superseded page: "Superseded by: <target>"
(so the *target* supersedes the source); each side reconciles what its own text states."""
