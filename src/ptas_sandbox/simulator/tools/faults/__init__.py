"""Fault injection per world (issue 14): make the API or the webhook outbox misbehave on purpose."""
