"""Reports (spec §1 capability 7, §2, §4.3): settlement reports of types with hasPspReports."""
