"""Tenancy and identity: repositories, grants, delegations, tokens, discovery."""
