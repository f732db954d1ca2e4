"""Accounts (spec §1 capability 3, §2, §4.3): credentials checked against the type, one per provider per user."""
