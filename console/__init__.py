"""The curator console."""
