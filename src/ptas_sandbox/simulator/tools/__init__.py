"""Sandbox tools: what the sandbox adds beside the spec's areas (control, journal, faults, integration report...).

ORDER is the order the tools attach in, so the order of their hooks within each stage (hooks.py): the journal
opens its entry (before) ahead of the snapshot body limit that may refuse the request, so a refused load is
journaled too."""

ORDER = ("apidocs", "control", "echo", "faults", "inspector", "journal", "integration", "profile", "scenarios",
         "snapshots")
