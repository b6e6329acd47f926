"""Freshness: curated pages whose cited evidence moved (drift), and where knowledge is thin
(gaps)."""
