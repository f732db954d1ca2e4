"""Accounts (spec §1 capability 3, §2, §4.3): credentials checked against the account type, one per provider per user."""
