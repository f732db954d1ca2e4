"""Dummy providers: deterministic transaction data drawn from (world seed, account id), on a schedule."""
