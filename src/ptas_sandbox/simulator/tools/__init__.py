"""Sandbox tools: what the sandbox adds beside the spec's areas (control, journal, faults, integration report...)."""
