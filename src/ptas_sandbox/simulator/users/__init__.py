"""Users and user tokens (spec §1 capability 2, §2 user resource, §4.2 notes 1 to 3, §4.3, §5 rule 6)."""
