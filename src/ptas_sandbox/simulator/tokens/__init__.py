"""Tokens (spec §2 token record, §3 token states, §4.1 token endpoints, §5 authentication)."""
