"""Starts the webhook dispatcher with the app and stops it with the sandbox (Simulator.close)."""

from flask import request

from .dispatcher import Dispatcher


def attach(app, sandbox):
    """One dispatcher per app, always there for `flush`; its thread runs only when START_SERVICES is true."""
    dispatcher = Dispatcher(app, sandbox)
    app.extensions["ptas.webhooks"] = dispatcher
    sandbox.services.append(dispatcher)

    @app.after_request
    def wake_dispatcher(response):
        # A request may have written events: look now rather than at the next poll. A request that reached
        # the app through a real server means only callbacks at its own loopback port are called in-process.
        if "SERVER_SOFTWARE" in request.environ:
            dispatcher.own_ports.add(request.environ.get("SERVER_PORT"))
            dispatcher.served = True
        dispatcher.wake()
        return response

    if app.config["START_SERVICES"]:
        dispatcher.start()
