"""Sandbox tools: what the sandbox adds beside the spec's areas (control, journal, faults, integration report...).

ORDER is the order the tools attach in. Flask runs `after_request` hooks last-registered first, and the
integration report's hook notes marks on the journal entry that the journal's hook then writes, so the
integration report attaches after the journal."""

ORDER = ("apidocs", "control", "echo", "faults", "inspector", "journal", "integration", "profile", "scenarios",
         "snapshots")
