"""Receiver-side helper for partner developers: check that a notification really came from the sandbox.

The public name of `ptas_sandbox.simulator.webhooks.signatures`, where the simulator signs with the same code;
see that module (standard library only, so a receiver can copy it as it is) and docs/webhooks.md.
"""

from ptas_sandbox.simulator.webhooks.signatures import PREFIX, InvalidSignature, key_of, sign, verify

__all__ = ["PREFIX", "InvalidSignature", "key_of", "sign", "verify"]
