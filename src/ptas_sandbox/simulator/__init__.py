"""The simulator: a stateful Flask application implementing every operation of the interface specification."""

from .app import create_app

__all__ = ["create_app"]
