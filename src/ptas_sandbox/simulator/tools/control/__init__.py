"""The sandbox control API (docs/design.md): health, worlds, the world clock, reset. Outside the service prefix."""
