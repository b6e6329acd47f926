"""Routing: which repository, tags, classification and policy each file of a backlog gets —
the ``routing.yaml`` schema (``model``), its conditions (``conditions``) and the rules
(``rules``)."""
