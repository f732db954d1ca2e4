"""User UI sessions: graphical user registration on a hosted page (spec §4.2 note 4, §9 2.12.0)."""
