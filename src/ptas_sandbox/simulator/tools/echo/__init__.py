"""The sandbox side of webhooks (docs/design.md, the control API): echo capture, delivery log, flush, inspector."""
