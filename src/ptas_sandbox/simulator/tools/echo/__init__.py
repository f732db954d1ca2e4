"""The sandbox side of webhooks (DESIGN.md control API): echo capture, delivery log, flush, inspector."""
