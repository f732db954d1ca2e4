"""The sandbox control API (DESIGN.md): health, worlds, the world clock, reset. Outside the service prefix."""
