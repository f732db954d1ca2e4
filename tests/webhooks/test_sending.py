"""Sending webhook attempts in a shared sandbox (issue 11 item 3): a whole-attempt deadline however the receiver
paces its bytes, an acknowledged attempt is never failed, a per-destination cap on attempts in flight, no calls
into private networks unless allowed (checked on the resolved address at send time), and a bounded log."""

import socket
import threading

import pytest
import requests

from ptas_sandbox.simulator import create_app
from ptas_sandbox.simulator.webhooks.sender import Sender, literal_refusal
from tests.support.client import Api
from tests.support.problems import assert_problem
from tests.support.receivers import LONG, Receiver, Served
from tests.support.worlds import new_world

DEADLINE = 0.5    # the deadline tests' receivers never answer in time


class RawReceiver:
    """A TCP server whose answer is scripted byte by byte: `script(conn)` does the talking. Records how many
    bytes it managed to send before the sandbox hung up."""

    def __init__(self, script):
        self.script = script
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sent = []
        self.hung_up = threading.Event()
        self.stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/hook"

    def _serve(self):
        try:
            conn, _ = self.sock.accept()
        except OSError:
            return
        with conn:
            read_request(conn)
            try:
                self.script(self, conn)
            except OSError:
                self.hung_up.set()

    def trickle(self, conn, data, every):
        for byte in data:
            if self.stop.wait(every):
                return
            conn.sendall(bytes([byte]))
            self.sent.append(byte)

    def close(self):
        self.stop.set()
        self.sock.close()


def read_request(conn):
    """All of the request (closing with unread bytes would reset the connection instead of ending it)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(next((line.split(b":")[1] for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), b"0"))
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return
        body += chunk




def subscribe(world, url, events=("AccountCreated",)):
    response = world.api.post("/webhooks", json={"callbackUrl": url, "events": list(events)})
    assert response.status_code == 201, response.json
    return response.json


def deliveries(world):
    return world.api.get("/_sandbox/deliveries").json["deliveries"]


@pytest.mark.parametrize("deadline", [DEADLINE], indirect=True)
def test_a_receiver_trickling_its_answer_is_cut_off_at_the_deadline(world):
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"     # 38 bytes, one every 0.2 s: 7.6 s in all
    trickler = RawReceiver(lambda self, conn: self.trickle(conn, answer, 0.2))
    try:
        subscribe(world, trickler.url)
        world.api.post("/testevents/accountcreated")
        world.api.post("/_sandbox/webhooks/flush")
        first = deliveries(world)[0]
        assert first["status"] == "failed" and first["error"].startswith("timeout"), first
        assert len(trickler.sent) < len(answer), "the sandbox hung up before the receiver finished its answer"
    finally:
        trickler.close()


def test_an_answer_whose_body_breaks_after_a_2xx_is_a_success(world):
    """The status line is the receiver's acknowledgement: a body that breaks off (or stalls past the deadline)
    must not turn a received notification into a failure, a retry (a duplicate) and in the end a 'given up'."""
    def script(self, conn):
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nX-Receiver: slowpoke\r\n\r\nstarted")
        # ... and the connection closes, 993 bytes short of what Content-Length promised
    staller = RawReceiver(script)
    try:
        subscribe(world, staller.url)
        world.api.post("/testevents/accountcreated")
        assert world.api.post("/_sandbox/webhooks/flush").json["pending"] == 0, "nothing left to retry"
        [attempt] = deliveries(world)
        assert attempt["status"] == "succeeded" and attempt["final"] and attempt["error"] is None
        assert attempt["response"]["status"] == 200 and attempt["response"]["body"] == "started"
        assert attempt["response"]["headers"]["X-Receiver"] == "slowpoke"
    finally:
        staller.close()


def test_the_log_keeps_the_status_headers_and_256_bytes_of_the_answer(world):
    chatty = Receiver(status=201, answer="é" * 1000)
    try:
        subscribe(world, chatty.url)
        world.api.post("/testevents/accountcreated")
        world.api.post("/_sandbox/webhooks/flush")
        [attempt] = deliveries(world)
        assert attempt["response"]["status"] == 201
        assert len(attempt["response"]["body"].encode()) <= 256 and attempt["response"]["body"].startswith("é")
        assert attempt["response"]["headers"]["Content-Type"].startswith("text/plain")
    finally:
        chatty.close()


def test_the_default_deadline_is_ten_seconds_for_the_whole_attempt(system_time):
    app = create_app({"SYSTEM_TIME": system_time, "START_SERVICES": False})
    try:
        assert app.extensions["ptas.webhooks"].sender.deadline == 10
    finally:
        app.extensions["ptas"].close()


# --- private addresses ---------------------------------------------------------------------------------------

@pytest.fixture
def public_only(system_time):
    """A sandbox bound to a public interface: no callbacks into private networks."""
    app = create_app({"SYSTEM_TIME": system_time, "START_SERVICES": False, "ALLOW_PRIVATE_CALLBACKS": False,
                      "WEBHOOK_TIMEOUT_SECONDS": LONG})
    yield app
    app.extensions["ptas"].close()


@pytest.mark.parametrize("url", [
    "http://127.0.0.1:9/hook", "http://localhost/hook", "http://[::1]/hook", "http://169.254.169.254/latest",
    "http://10.0.0.7/hook", "http://192.168.1.1/hook", "http://[fe80::1]/hook", "http://0.0.0.0/hook",
    "http://[::ffff:127.0.0.1]/hook",
    # every IPv4 spelling the resolver reads (issue 24: these passed here and were refused only at delivery)
    "http://127.1/hook", "http://0/hook", "http://2130706433/hook", "http://0x7f000001/hook",
    "http://0177.0.0.1/hook", "http://0x7f.1/hook", "http://0251.0376.0251.0376/latest", "http://10.1/hook"])
def test_a_callback_naming_a_private_address_is_refused_at_subscription(public_only, url):
    world = new_world(Api(public_only.test_client()))
    assert_problem(world.api.post("/webhooks", json={"callbackUrl": url, "events": ["AccountCreated"]}), 400)
    hook = subscribe(world, "https://hooks.example.com/ptas")
    assert_problem(world.api.patch(f"/webhooks/{hook['id']}", json={"callbackUrl": url}), 400)


def test_the_echo_path_is_exempt_only_at_a_loopback_host_where_the_sandbox_calls_its_own_receiver(public_only):
    world = new_world(Api(public_only.test_client()))
    for url in ("http://10.0.0.7/_sandbox/echo/bin", "http://169.254.169.254/_sandbox/echo/bin"):
        assert_problem(world.api.post("/webhooks", json={"callbackUrl": url, "events": ["AccountCreated"]}), 400)
    for url in ("http://127.0.0.1:8080/_sandbox/echo/bin", "http://localhost/_sandbox/echo/bin"):
        subscribe(world, url)


# Each IPv6 form that embeds or translates an IPv4 address, around 127.0.0.1 / 10.0.0.7 / 169.254.169.254 and
# around 8.8.8.8 (issue 40: the 6to4 form of loopback was accepted).
EMBEDDING = [
    ("IPv4-mapped", "::ffff:7f00:1", "::ffff:808:808"),
    ("IPv4-compatible", "::7f00:1", "::808:808"),
    ("6to4", "2002:7f00:1::", "2002:808:808::"),
    ("6to4, private", "2002:a00:7:1::5", "2002:808:808:1::5"),
    ("Teredo (client inverted)", "2001:0:4136:e378:8000:63bf:80ff:fffe", "2001:0:4136:e378:8000:63bf:f7f7:f7f7"),
    ("Teredo, link-local", "2001:0:4136:e378::5601:5601", "2001:0:4136:e378::f7f7:f7f7"),
    ("NAT64 well-known", "64:ff9b::7f00:1", "64:ff9b::808:808"),
    ("NAT64 well-known, metadata", "64:ff9b::a9fe:a9fe", "64:ff9b::808:808"),
    ("NAT64 local-use /96", "64:ff9b:1::7f00:1", None),
    ("NAT64 local-use /48", "64:ff9b:1:7f00:1::", None),
    ("NAT64 local-use /64", "64:ff9b:1:0:7f:0:1:0", None),
]


@pytest.mark.parametrize("form, inner_private, inner_public", EMBEDDING, ids=[row[0] for row in EMBEDDING])
def test_an_ipv6_address_embedding_ipv4_is_judged_by_the_ipv4_inside(public_only, form, inner_private,
                                                                      inner_public):
    world = new_world(Api(public_only.test_client()))
    assert_problem(world.api.post("/webhooks", json={"callbackUrl": f"http://[{inner_private}]/hook",
                                                     "events": ["AccountCreated"]}), 400)
    if inner_public is not None:        # what a public host is reached by (a NAT64 network's, say) is accepted
        subscribe(world, f"http://[{inner_public}]/hook")


def test_the_local_use_nat64_prefix_is_refused_unless_every_place_it_may_hold_an_ipv4_is_public():
    """The local-use prefix may be /48 to /96 long (the network chooses), so the IPv4 it translates to is
    unknown: each place RFC 6052 may put it is judged."""
    from ipaddress import ip_address

    from ptas_sandbox.simulator.webhooks.sender import forbidden
    assert forbidden(ip_address("64:ff9b:1:808:8:808:808:0")) is None
    assert forbidden(ip_address("64:ff9b:1::808:808")) is not None     # as a /48, it is 0.0.0.0


def test_a_public_ipv6_callback_is_accepted_like_any_public_address(public_only):
    world = new_world(Api(public_only.test_client()))
    hook = subscribe(world, "https://[2606:4700:4700::1111]/hook")
    assert hook["callbackUrl"] == "https://[2606:4700:4700::1111]/hook"


def test_an_ipv6_receiver_gets_its_notifications(app, world):
    receiver = Receiver(host="::1")
    try:
        subscribe(world, f"http://[::1]:{receiver.server.server_port}/hook")
        world.api.post("/testevents/accountcreated")
        world.api.post("/_sandbox/webhooks/flush")
        assert receiver.wait_for(1)
        assert [entry["status"] for entry in world.api.get("/_sandbox/deliveries").json["deliveries"]] == \
            ["succeeded"]
    finally:
        receiver.close()


def test_the_sandboxes_own_echo_is_always_allowed(public_only):
    world = new_world(Api(public_only.test_client()))
    subscribe(world, "http://localhost/_sandbox/echo/own-bin")
    world.api.post("/testevents/accountcreated")
    world.api.post("/_sandbox/webhooks/flush")
    [attempt] = deliveries(world)
    assert attempt["status"] == "succeeded" and attempt["response"]["status"] == 200
    assert len(world.api.get("/_sandbox/echo/own-bin").json["captures"]) == 1


@pytest.mark.parametrize("private", ["127.0.0.1", "2002:7f00:1::", "64:ff9b::7f00:1"])
def test_a_name_resolving_to_a_private_address_at_send_time_is_refused(public_only, private):
    """DNS rebinding: the name was public when subscribed and points into the private network when called."""
    receiver = Receiver()
    port = receiver.server.server_port
    answers = {"rebind.example.com": "93.184.215.14"}      # public at subscription time
    real = socket.getaddrinfo

    def resolve(host, *args, **kw):
        return real(answers.get(host, host), *args, **kw)
    public_only.extensions["ptas.webhooks"].sender.resolve = resolve
    try:
        world = new_world(Api(public_only.test_client()))
        subscribe(world, f"http://rebind.example.com:{port}/hook")
        answers["rebind.example.com"] = private      # ... and loopback when called
        world.api.post("/testevents/accountcreated")
        world.api.post("/_sandbox/webhooks/flush")
        first = deliveries(world)[0]
        assert first["status"] == "failed" and first["error"].startswith("refused") and "loopback" in first["error"]
        assert first["response"] is None
        assert receiver.requests == [], "nothing reached the private address"
    finally:
        receiver.close()


def test_a_sandbox_on_a_laptop_calls_local_receivers(world):
    receiver = Receiver()
    try:
        subscribe(world, receiver.url)
        world.api.post("/testevents/accountcreated")
        world.api.post("/_sandbox/webhooks/flush")
        assert receiver.wait_for(1, timeout=0)
    finally:
        receiver.close()


def test_the_sender_checks_every_address_a_name_resolves_to():
    def resolve(host, port, **kw):
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, port)) for ip in ("93.184.215.14", "10.1.2.3")]
    outcome = Sender(LONG, allow_private=False, resolve=resolve).send("http://mixed.example.com/", b"{}", {})
    assert outcome.status is None and "10.1.2.3" in outcome.error and "private" in outcome.error


def test_literal_refusal_does_not_resolve_names():
    assert literal_refusal("https://hooks.example.com/x") is None
    assert literal_refusal("http://LOCALHOST./x") == "loopback"
    assert literal_refusal("http://169.254.169.254/x") == "link-local"


@pytest.mark.parametrize("host, allowed", [("127.0.0.1", True), ("localhost", True), ("::1", True),
                                           ("0.0.0.0", False), ("192.168.1.20", False)])
def test_serve_allows_private_callbacks_only_on_a_loopback_bind(host, allowed):
    from ptas_sandbox.cli.serve import private_callbacks_default
    assert private_callbacks_default(host) is allowed


# --- the per-destination cap ----------------------------------------------------------------------------------

@pytest.fixture
def served(system_time):
    served = Served(create_app({"SYSTEM_TIME": system_time, "START_SERVICES": True, "WEBHOOK_TIMEOUT_SECONDS": 60,
                                "WEBHOOK_WORKERS": 16, "WEBHOOK_PARALLEL_PER_DESTINATION": 4}))
    yield served.app, served.base
    served.close()


def test_slow_receivers_of_one_host_do_not_delay_another_worlds_delivery(served):
    """Eight worlds' receivers on one host hold every request; another world's delivery to the same host still
    goes out at once, and health answers: the per-host cap counts per world and host, and a quarter of the
    senders is kept for worlds with nothing on the wire (issue 24: the cap shared by every world let one world's
    hanging receiver delay another's healthy one)."""
    app, base = served
    held = [Receiver(hold=120) for _ in range(8)]
    live = Receiver()
    try:
        for receiver in held:
            world = requests.post(f"{base}/_sandbox/partners", json={}).json()
            headers = {"Authorization": f"Bearer {world['accessToken']}"}
            requests.post(f"{base}/partner/v2/webhooks", headers=headers, json={
                "callbackUrl": receiver.url, "events": ["AccountCreated"]}).raise_for_status()
            for _ in range(2):
                requests.post(f"{base}/partner/v2/testevents/accountcreated", headers=headers).raise_for_status()
        assert any(r.arrived.wait(10) for r in held)
        other = requests.post(f"{base}/_sandbox/partners", json={}).json()
        headers = {"Authorization": f"Bearer {other['accessToken']}"}
        requests.post(f"{base}/partner/v2/webhooks", headers=headers, json={
            "callbackUrl": live.url, "events": ["AccountCreated"]}).raise_for_status()
        requests.post(f"{base}/partner/v2/testevents/accountcreated", headers=headers).raise_for_status()
        assert live.arrived.wait(10), "delivered while the slow host held its attempts"
        assert requests.get(f"{base}/_sandbox/health", timeout=10).status_code == 200
        on_the_wire = sum(len(r.requests) for r in held)
        assert on_the_wire < 16, f"{on_the_wire} attempts of hanging receivers took every sender"
    finally:
        for receiver in held + [live]:
            receiver.close()
