"""Sending one webhook attempt: the HTTP I/O of delivery, apart from the outbox and its claims (dispatcher).

Three rules a shared sandbox needs:
- A whole-attempt deadline. Connecting, sending, the status line, the headers and the part of the body we keep
  all fit in `deadline` seconds, however the receiver paces its bytes: a watchdog shuts the socket down when
  the time is up (a per-read timeout let a receiver trickling a byte a second hold an attempt for minutes).
- The receiver's status line is its answer. A 2xx received is a success even if the body then stalls or
  breaks: the receiver has acknowledged, so the attempt is never retried or given up.
- No callbacks into the sandbox's own network. Loopback, private, link-local and other special addresses are
  refused unless the server allows private callbacks; the check is made on the addresses the name resolves to
  at send time, and the connection goes to the address checked (a name cannot resolve to a public address when
  subscribed and to 169.254.169.254 when called). The sandbox's own echo receiver is called through WSGI.
- Resolving the name is part of the attempt. `getaddrinfo` cannot be interrupted, so it runs in a thread of its
  own and the attempt waits for it only as long as its deadline allows (a receiver's slow name server held a
  sender for as long as it liked). A lookup that outlives its attempt ends when the system resolver gives up;
  its answer is dropped. One thread per lookup, not a pool: slow lookups of one receiver never queue another's.

What is kept of an answer is bounded: the status, at most `MAX_HEADERS` headers cut to `HEADER_KEPT` characters,
and the first `BODY_KEPT` bytes of the body.
"""

import functools
import http.client
import ipaddress
import re
import socket
import ssl
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

BODY_KEPT = 256          # bytes of a receiver's answer kept in the delivery log
MAX_HEADERS = 32         # headers of an answer kept
HEADER_KEPT = 256        # characters of each header value kept
DEFAULT_PORTS = {"http": 80, "https": 443}
LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}
# The app's own echo receiver, which the dispatcher calls through WSGI (never over the network): at these hosts,
# on the port the app is served on, under this path.
OWN_HOSTS = {"127.0.0.1", "localhost", "::1"}
ECHO_PATH = "/_sandbox/echo/"


def private_callbacks_allowed(config):
    """ALLOW_PRIVATE_CALLBACKS, where None (in-process use, no server bound) allows them."""
    allow = config.get("ALLOW_PRIVATE_CALLBACKS")
    return True if allow is None else bool(allow)


class Refused(Exception):
    """The callback URL names an address the sandbox will not call."""


class ResolveTimeout(Exception):
    """The callback host's name was not resolved within the attempt's deadline."""


@dataclass
class Outcome:
    """What one attempt got: a status (with headers and the start of the body), or an error, never both empty."""
    status: int | None = None
    headers: dict = field(default_factory=dict)
    body: str | None = None
    error: str | None = None


NAT64 = ipaddress.IPv6Network("64:ff9b::/96")              # RFC 6052's well-known prefix
NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")       # RFC 8215's local-use prefix, /48 to /96 long


def embedded_ipv4(address):
    """The IPv4 addresses an IPv6 address embeds or translates to, which a delivery to it would reach: mapped
    (::ffff:a.b.c.d), compatible (::a.b.c.d), 6to4 (2002::/16), Teredo (2001::/32, the client's, stored
    inverted), NAT64 (64:ff9b::/96); for the local-use NAT64 prefix, every place RFC 6052 may put it (the prefix
    length is the network's choice). Empty for any other address."""
    if not isinstance(address, ipaddress.IPv6Address):
        return []
    value = int(address)
    if address.ipv4_mapped:
        return [address.ipv4_mapped]
    if address.sixtofour:
        return [address.sixtofour]
    if address.teredo:
        return [address.teredo[1]]
    if address in NAT64 or (1 < value < 1 << 32):      # NAT64, IPv4-compatible (:: and ::1 are IPv6's own)
        return [ipaddress.IPv4Address(value & 0xFFFFFFFF)]
    if address in NAT64_LOCAL:
        octets = address.packed
        # RFC 6052 §2.2: the IPv4 address follows the prefix, skipping bits 64-71 (the `u` octet).
        return [ipaddress.IPv4Address(bytes(octets[12:16])),                    # /96
                ipaddress.IPv4Address(bytes(octets[9:13])),                     # /64
                ipaddress.IPv4Address(bytes(octets[7:8] + octets[9:12])),       # /56
                ipaddress.IPv4Address(bytes(octets[6:8] + octets[9:11]))]       # /48
    return []


def forbidden(address):
    """Why the sandbox will not call `address` (an ip_address), or None when it is a public unicast address.
    An IPv6 address that embeds or translates an IPv4 address is judged by what it reaches: the IPv4 inside
    (any of them, for the local-use NAT64 prefix), not by the IPv6 range, which names no host."""
    inside = embedded_ipv4(address)
    if inside:
        reasons = [forbidden(v4) for v4 in inside]
        return next((reason for reason in reasons if reason), None)
    for reason, test in (("loopback", address.is_loopback), ("link-local", address.is_link_local),
                         ("private", address.is_private), ("multicast", address.is_multicast),
                         ("unspecified", address.is_unspecified), ("reserved", address.is_reserved),
                         ("not globally routable", not address.is_global)):
        if test:
            return reason
    return None


def literal_refusal(url):
    """At subscription time, without resolving names: why a URL naming a special address literally (an IP in
    any spelling, IPv6 included, or `localhost`) would be refused, or None. Names are checked again, resolved,
    at every attempt."""
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    if host in LOOPBACK_NAMES or host.endswith(".localhost"):
        return "loopback"
    address = literal_address(host)
    return None if address is None else forbidden(address)


# The IPv4 spellings the system's resolver takes besides the dotted quad: fewer parts (127.1), one decimal
# number (2130706433), hex (0x7f.1) and octal (0177.0.0.1) parts; inet_aton reads them as getaddrinfo does.
LEGACY_IPV4 = re.compile(r"^(0x[0-9a-f]*|[0-9]+)(\.(0x[0-9a-f]*|[0-9]+)){0,3}$")


def literal_address(host):
    """The address a host names literally (ip_address, whatever spelling the resolver would read), or None
    for a name."""
    try:
        return ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        pass
    if LEGACY_IPV4.match(host):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


def destination(url):
    """What the per-destination cap counts: the receiving host (its ports and paths are one machine)."""
    return (urlsplit(url).hostname or "").rstrip(".").lower()


class _Watchdog:
    """Shuts a socket down when an attempt's deadline passes, which wakes a blocked read or write at once."""

    def __init__(self, seconds):
        self.sock = None
        self.expired = False
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self):
        self._timer.start()
        return self

    def __exit__(self, *exc):
        self._timer.cancel()
        return False

    def watch(self, sock):
        with self._lock:
            self.sock = sock
            if self.expired:
                self._shutdown()

    def _expire(self):
        with self._lock:
            self.expired = True
            self._shutdown()

    def _shutdown(self):
        if self.sock is not None:
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class _PinnedConnection(http.client.HTTPConnection):
    """HTTP(S) to the address we checked, with the Host (and TLS server name) the URL names."""

    def __init__(self, host, port, addresses, deadline_at, watchdog, tls):
        super().__init__(host, port, timeout=max(deadline_at - time.monotonic(), 0.001))
        self.addresses, self.deadline_at, self.watchdog, self.tls = addresses, deadline_at, watchdog, tls

    def connect(self):
        failure = None
        for address in self.addresses:      # in the resolver's order, like socket.create_connection
            try:
                sock = socket.create_connection((address, self.port), max(self.deadline_at - time.monotonic(), 0.001))
                break
            except OSError as error:
                failure = error
        else:
            raise failure
        self.watchdog.watch(sock)
        if self.tls is not None:
            sock = self.tls.wrap_socket(sock, server_hostname=self.host)
            self.watchdog.watch(sock)
        self.sock = sock


class Sender:
    """Sends attempts over HTTP under the rules above. `allow_private` lets callbacks reach loopback and
    private addresses (a sandbox on a laptop calling a receiver on the same machine)."""

    def __init__(self, deadline=10.0, allow_private=True, resolve=None):
        self.deadline = float(deadline)
        self.allow_private = allow_private
        self.resolve = resolve      # None: socket.getaddrinfo, looked up at each call

    @functools.cached_property
    def tls(self):
        """Made at the first https callback: loading the system's CA certificates is costly at start-up."""
        return ssl.create_default_context()

    def send(self, url, body, headers):
        started = time.monotonic()
        deadline_at = started + self.deadline
        try:
            addresses, parts = self.vetted_addresses(url, deadline_at)
        except Refused as refusal:
            return Outcome(error=f"refused: {refusal}")
        except ResolveTimeout:
            return Outcome(error=f"timeout: {urlsplit(url).hostname!r} was not resolved within {self.deadline:g} s")
        except OSError as failure:
            return Outcome(error=f"connection failed: cannot resolve {urlsplit(url).hostname!r}: {failure}")
        outcome = Outcome()
        with _Watchdog(max(deadline_at - time.monotonic(), 0)) as watchdog:
            connection = _PinnedConnection(parts.hostname, parts.port or DEFAULT_PORTS[parts.scheme], addresses,
                                           deadline_at, watchdog, self.tls if parts.scheme == "https" else None)
            try:
                connection.request("POST", (parts.path or "/") + (f"?{parts.query}" if parts.query else ""),
                                   body=body, headers=headers)
                response = connection.getresponse()
                outcome.status = response.status
                outcome.headers = kept_headers(response.getheaders())
                outcome.body = read_start(response)
            except Exception as failure:  # whatever went wrong, the attempt ends with what it got
                if outcome.status is None:
                    outcome.error = (f"timeout: no complete answer within {self.deadline:g} s" if watchdog.expired
                                     else describe(failure))
            finally:
                connection.close()
        return outcome

    def vetted_addresses(self, url, deadline_at=None):
        """The addresses to connect to (the URL's host resolved now, by `deadline_at` on the monotonic clock),
        once every one of them is allowed."""
        parts = urlsplit(url)
        if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
            raise Refused(f"{url!r} is not an absolute http(s) URL")
        port = parts.port or DEFAULT_PORTS[parts.scheme]
        infos = self._resolved(parts.hostname, port, deadline_at)
        addresses = list(dict.fromkeys(info[4][0] for info in infos))
        if not self.allow_private:
            for text in addresses:
                reason = forbidden(ipaddress.ip_address(text.split("%")[0]))
                if reason:
                    raise Refused(f"{parts.hostname} resolves to {text}, a {reason} address; the server does not "
                                  "call private addresses (ptas serve --allow-private-callbacks)")
        return addresses, parts

    def _resolved(self, host, port, deadline_at):
        resolve = self.resolve or socket.getaddrinfo
        if deadline_at is None or is_literal(host):    # an address asks no name server
            return resolve(host, port, type=socket.SOCK_STREAM)
        answer, done = {}, threading.Event()

        def lookup():
            try:
                answer["infos"] = resolve(host, port, type=socket.SOCK_STREAM)
            except BaseException as failure:  # handed to the attempt, which says what went wrong
                answer["failure"] = failure
            done.set()
        threading.Thread(target=lookup, name="ptas-resolve", daemon=True).start()
        if not done.wait(max(deadline_at - time.monotonic(), 0)):
            raise ResolveTimeout(host)
        if "failure" in answer:
            raise answer["failure"]
        return answer["infos"]


def is_literal(host):
    try:
        ipaddress.ip_address(host.split("%")[0])
        return True
    except ValueError:
        return False


def kept_headers(pairs):
    kept = {}
    for name, value in pairs[:MAX_HEADERS]:
        kept[name] = value[:HEADER_KEPT] if name not in kept else kept[name]
    return kept


def read_start(response):
    """The first BODY_KEPT bytes of the body, as text; a body that stalls or breaks keeps what came."""
    data = b""
    try:
        while len(data) < BODY_KEPT:
            chunk = response.read1(BODY_KEPT - len(data))     # what has come, not a full buffer's worth
            if not chunk:
                break
            data += chunk
    except Exception:  # the status is the answer; the body is only shown
        pass
    charset = response.headers.get_content_charset() or "utf-8"
    try:
        return data.decode(charset, "replace")
    except LookupError:
        return data.decode("utf-8", "replace")


def describe(failure):
    if isinstance(failure, ConnectionRefusedError):
        return "connection failed: refused"
    if isinstance(failure, (TimeoutError, socket.timeout)):
        return "timeout: no complete answer in time"
    if isinstance(failure, ssl.SSLError):
        return f"connection failed: TLS: {str(failure)[:300]}"
    if isinstance(failure, (OSError, http.client.HTTPException)):
        return f"connection failed: {type(failure).__name__}: {str(failure)[:300]}"
    return f"{type(failure).__name__}: {str(failure)[:300]}"
