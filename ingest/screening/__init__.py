"""The PII barrier: personal data and secrets found, counted and masked (``pii``), with the
secret rule set (``secret_rules``)."""
