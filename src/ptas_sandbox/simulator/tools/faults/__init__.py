"""Fault injection per world: make the API or the webhook outbox misbehave on purpose."""
