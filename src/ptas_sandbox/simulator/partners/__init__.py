"""Partners and child partners (spec §1 capability 1, §2 partner resource, §4.2, §4.3, §5 rule 4)."""
