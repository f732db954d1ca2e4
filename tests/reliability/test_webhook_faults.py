"""Every webhook fault (docs/chaos.md) against every way a receiver fails (issue 24): each notification's
attempts run the whole retry schedule and end, none stays `sending` and none is sent again for ever. The
`duplicate` fault's copy once shared its original's retry ids; its record failed and it went out every lease,
for ever. Failures are local receivers with a short attempt deadline, so the matrix stays fast."""

import socket
import threading

import pytest

from ptas_sandbox.simulator.webhooks.deliveries import BACKOFF_S
from tests.support.receivers import Receiver, Silent, refused_url

ATTEMPTS = 1 + len(BACKOFF_S)
FAULTS = {"duplicate": {"type": "duplicate", "copies": 1}, "delay": {"type": "delay", "seconds": 60},
          "reorder": {"type": "reorder"}, "bad-signature": {"type": "bad-signature"}}


@pytest.fixture
def config(config):
    return {**config, "WEBHOOK_TIMEOUT_SECONDS": 0.3}


class Closing:
    """Accepts a connection, reads the request and closes without an answer."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/hook"
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while True:
            try:
                connection, _ = self.sock.accept()
            except OSError:
                return
            with connection:
                connection.recv(65536)

    def close(self):
        self.sock.close()


class Refusing:
    def __init__(self):
        self.url = refused_url()

    def close(self):
        pass


def failing(kind):
    return {"refuses": Refusing, "closes": Closing, "answers-500": lambda: Receiver(status=500),
            "hangs": Silent}[kind]()


@pytest.mark.parametrize("failure", ["refuses", "closes", "answers-500", "hangs"])
@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_webhook_fault_on_a_failing_receiver_runs_its_schedule_and_ends(world, fault, failure):
    receiver = failing(failure)
    try:
        hook = world.api.post("/webhooks", json={"callbackUrl": receiver.url, "events": ["AccountCreated"]}).json
        assert world.api.post("/_sandbox/faults", json={"match": {"webhookId": hook["id"]},
                                                        "effect": FAULTS[fault]}).status_code == 201
        assert world.api.post("/testevents/accountcreated").status_code in (200, 201, 202)
        for _ in range(ATTEMPTS + 2):       # each round: what is due goes out, then the clock passes the backoff
            flushed = world.api.post("/_sandbox/webhooks/flush")
            assert flushed.status_code == 200, flushed.json
            world.api.advance(max(BACKOFF_S) + 300)
        world.api.post("/_sandbox/webhooks/flush")
        log = world.api.get("/_sandbox/deliveries").json["deliveries"]
    finally:
        receiver.close()
    notifications = 2 if fault == "duplicate" else 1
    assert [entry["status"] for entry in log] == ["failed"] * (notifications * ATTEMPTS), log
    assert len({entry["id"] for entry in log}) == len(log)
    assert sum(entry["final"] for entry in log) == notifications
