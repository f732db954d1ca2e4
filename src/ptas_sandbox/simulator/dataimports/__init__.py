"""Data imports (spec §4.2, §7.4): each import run of an account, progressing on the world clock."""
