"""Lets a snapshot be larger than other request bodies (bounded by SNAPSHOT_MAX_BYTES)."""

from flask import request

from . import models


def attach(app, sandbox):
    limit = app.config.get("SNAPSHOT_MAX_BYTES", models.MAX_BYTES)

    @app.before_request
    def larger_snapshots():
        if request.endpoint == "SandboxLoadSnapshot":
            request.max_content_length = limit
