"""Lets a snapshot be larger than other request bodies (bounded by SNAPSHOT_MAX_BYTES), and refuses one whose
JSON would take far more memory than its size says before it is parsed."""

from ...problems import PayloadTooLarge
from . import models


def attach(app, sandbox):
    limit = app.config.get("SNAPSHOT_MAX_BYTES", models.MAX_BYTES)

    def larger_snapshots(req):
        if req.endpoint == "SandboxLoadSnapshot":
            req.max_content_length = limit
            data = req.get_data(cache=True)      # the pipeline parses it from here
            if data.count(b"{") + data.count(b"[") > models.MAX_CONTAINERS:
                raise PayloadTooLarge(f"A snapshot holds at most {models.MAX_CONTAINERS} JSON objects and arrays "
                                      "(its large tables travel packed); this one holds more.")

    sandbox.hooks.before.append(larger_snapshots)
