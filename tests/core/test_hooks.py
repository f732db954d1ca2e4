"""The stages of hooks.py: each app fills its own, in the order docs/architecture.md and hooks.py state."""

import functools

from ptas_sandbox.simulator import create_app


def fillers(hooks):
    """Each stage's hooks by module and name."""
    def name(hook):
        return f"{hook.__module__.removeprefix('ptas_sandbox.simulator.')}.{hook.__qualname__.replace('<locals>.', '')}"
    def named(hook):
        return name(hook.func) if isinstance(hook, functools.partial) else name(hook)
    stages = {stage: [named(h) for h in getattr(hooks, stage)]
              for stage in ("before", "intercept", "after", "record", "fan_out", "signing", "delivery_log")}
    stages["tokens"] = [named(hooks.tokens.authenticate), named(hooks.tokens.read), named(hooks.tokens.control)]
    stages["catch_up"] = [named(stage.run) for stage in hooks.catch_up]
    return stages


def test_the_stages_are_filled_in_the_order_the_docs_state(app):
    assert fillers(app.extensions["ptas"].hooks) == {
        "before": ["tools.journal.service.attach.start_entry", "tools.snapshots.service.attach.larger_snapshots"],
        "intercept": ["tools.faults.http.intercept"],
        "tokens": ["tokens.models.authenticate", "tokens.models.read_token", "tokens.models.control_principal"],
        "catch_up": ["catchup.service.catch_up_imports", "tools.control.models.prune_expired"],
        "after": ["webhooks.service.attach.wake_dispatcher", "tools.integration.service.attach.note"],
        "record": ["tools.journal.service.attach.finish_entry"],
        "fan_out": ["tools.faults.models.after_fan_out"],
        "signing": ["tools.faults.models.before_signing"],
        "delivery_log": ["tools.faults.models.mark_log"],
    }


def test_each_app_has_stages_of_its_own(config):
    first, second = create_app(config), create_app({**config, "STATE": ":memory:"})
    try:
        one, two = first.extensions["ptas"].hooks, second.extensions["ptas"].hooks
        assert one is not two and one.fan_out is not two.fan_out
        assert len(one.fan_out) == len(two.fan_out) == 1        # nothing added twice by a second app
    finally:
        first.extensions["ptas"].close()
        second.extensions["ptas"].close()
