"""Transactions (spec §1 capability 5, §2, §4.3): keyset pages, searches and the exclude flags."""
