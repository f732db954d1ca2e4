"""Webhooks (spec §4.2 webhook and test-event rows, §6, §7.4, §9): subscriptions, delivery, test events."""
