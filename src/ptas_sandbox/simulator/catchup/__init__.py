"""The import catch-up: a stage of the request pipeline, above accounts, data imports, transactions and reports."""
