"""Fixtures and helpers for partners' own tests: an in-process (or served) sandbox, partners, users, the clock."""
