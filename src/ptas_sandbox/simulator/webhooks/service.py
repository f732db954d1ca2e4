"""Starts the webhook dispatcher with the app and stops it with the sandbox (Simulator.close)."""

from .. import events
from ..operations import REGISTRY
from .dispatcher import Dispatcher


def attach(app, sandbox):
    """One dispatcher per app, always there for `flush`; its thread runs only when START_SERVICES is true."""
    dispatcher = Dispatcher(app, sandbox)
    app.extensions["ptas.webhooks"] = dispatcher
    sandbox.services.append(dispatcher)

    def wake_dispatcher(req, response):
        # A request that wrote events, or steered a world (a clock move makes retries due; faults and snapshots
        # move attempts), has work for the dispatcher: look now rather than at the next poll. Any other request
        # leaves it be (a wake was a round with a write transaction, per request). A request that reached the app
        # through a real server means only callbacks at its own loopback port are called in-process.
        environ = req.environ
        if "SERVER_SOFTWARE" in environ:
            dispatcher.own_ports.add(environ.get("SERVER_PORT"))
            dispatcher.served = True
        op = REGISTRY.get(req.endpoint)
        if events.take_emitted() or op is None or op.control:
            dispatcher.wake()
    sandbox.hooks.after.append(wake_dispatcher)

    if app.config["START_SERVICES"]:
        dispatcher.start()
