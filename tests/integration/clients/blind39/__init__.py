"""Blind case 39: two partner clients written blind (from the spec, README, docs/chaos.md, simulator.md,
webhooks.md, cli.md, accounts.md, the harness and the earlier clients only; the report's rules, its findings and
its tests were not read, and the report was never called). careful.py is a reseller back office: the main partner
runs two tenants as child partners, each with its own token, webhook and merchants (one on a provider with
settlement reports, one on an OAuth2 provider), reconciles transactions against reports notification by
notification, reconnects an OAuth2 account and off-boards a tenant, surviving every fault type of harness.RUNS.
naive.py is a marketplace plugin that does the same kind of job with 18 numbered server-visible mistakes of kinds
the earlier naive clients do not make; MANIFEST.md lists them and what the careful client does."""
