"""Account types (spec §1 capabilities 4 and 6, §2): the catalogue and per-world provider states."""
