"""Account UI sessions: account creation or update on a hosted page (spec §4.2 note 4, §9 2.3.0, 2.4.0)."""
