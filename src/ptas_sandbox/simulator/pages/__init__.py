"""Hosted HTML pages (consent page, Account UI, User UI): the helpers their areas build on (http.py: templates,
forms, framing, sessions behind a page key) and the rules they share (models.py: page keys, the partner a page
wears)."""
