"""Hosted HTML pages (consent page, Account UI, User UI): the helpers their areas build on (html.py: templates,
forms, framing, sessions behind a page key; no operation of its own) and the rules they share (models.py: page
keys, the partner a page wears)."""
