"""`ptas serve`: the simulator on waitress, in one process or in `--workers` processes under gunicorn.

Three steps: `check` the options (a mistake is one line and exit 2), make the app's `settings` from them (an
option not given leaves the app's own default, `app.DEFAULTS`, the one place defaults live), `start` serving.
"""

import argparse
import errno
import os
import secrets
import signal
import socket
import sys

from ._client import spelling

ENVIRONMENT = """environment:
  PTAS_ADMIN_KEY   the server's admin key: creating worlds and loading scenarios (unless --open), the
                   server-wide inspector view and resetting every world need it
  PTAS_URL         where every command but serve and conform finds the sandbox
  PTAS_WORLD_KEY   the world key they act with (the worldKey of POST /_sandbox/partners); before PTAS_TOKEN
  PTAS_TOKEN       a root partner token of the world (what trigger and listen act with)
"""


def parents(path):
    """The folders above `path`, nearest first."""
    folder = os.path.dirname(os.path.abspath(path))
    while folder != os.path.dirname(folder):
        yield folder
        folder = os.path.dirname(folder)


def addresses(host, port):
    """The base URL to show for a bind, and a line for other machines when it binds every interface: 0.0.0.0 is
    an address to listen on, not one to call."""
    if host not in ("0.0.0.0", "::", ""):
        return f"http://{host}:{port}", ""
    return f"http://127.0.0.1:{port}", f"\n  from other machines: http://{socket.gethostname()}:{port}"


def fail(message):
    """One line on stderr and exit status 2: a start-up mistake is the user's to fix, not a traceback."""
    print(f"ptas serve: {message}", file=sys.stderr)
    sys.exit(2)


def add(commands):
    s = commands.add_parser("serve", help="run the simulator", epilog=ENVIRONMENT,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("--host", default="127.0.0.1", help="the interface to bind (default 127.0.0.1)")
    s.add_argument("--port", type=port, default=8080, help="the port (default 8080; 0: any free port)")
    s.add_argument("--state", default=os.path.join(".ptas", "sandbox.db"),
                   help="a file keeps the sandbox across restarts; :memory: throws it away")
    s.add_argument("--store", default=os.environ.get("PTAS_STORE"), metavar="LOCATION",
                   help="where the state lives: a SQLite file, :memory:, or postgresql://... (a team sandbox: "
                        "every worker on every machine shares it); overrides --state (default: PTAS_STORE)")
    s.add_argument("--workers", type=count(1), default=1, metavar="N",
                   help="N worker processes under gunicorn (default 1: one waitress process); a SQLite file "
                        "serves one machine, PostgreSQL any number")
    s.add_argument("--scenario", help="load a named scenario into a new world (see `ptas scenarios`)")
    s.add_argument("--seed", type=int, default=None,
                   help="server seed: world ids and data reproduce with it (default: random, printed)")
    s.add_argument("--admin-key", default=os.environ.get("PTAS_ADMIN_KEY"),
                   help="the operator's key (better: PTAS_ADMIN_KEY, which `ps` does not show): creating worlds "
                        "and loading scenarios need it in X-Sandbox-Admin-Key; it also resets every world")
    s.add_argument("--open", action="store_true",
                   help="with an admin key, still let anyone create worlds and load scenarios")
    s.add_argument("--max-worlds", type=int, help="worlds on this server (MAX_WORLDS; default 1000)")
    s.add_argument("--world-idle-hours", type=hours, metavar="HOURS",
                   help="on a full server, a world nobody called for this long makes room for a new one "
                        "(WORLD_IDLE_HOURS; default 24; 0: never)")
    s.add_argument("--echo-captures-per-bin", type=int,
                   help="captures kept per echo bin and world, the newest (ECHO_CAPTURES_PER_BIN)")
    s.add_argument("--echo-capture-max-bytes", type=int,
                   help="largest request the echo receiver keeps, headers included; more is 413 "
                        "(ECHO_CAPTURE_MAX_BYTES)")
    s.add_argument("--echo-total-bytes", type=int,
                   help="all echo captures together; the oldest go first (ECHO_TOTAL_BYTES)")
    s.add_argument("--retention-days", type=float,
                   help="outbox events, delivery attempts and echo captures older than this on their world's "
                        "clock are pruned (default 7)")
    s.add_argument("--connections-per-address", type=count(0), metavar="N",
                   help="open connections one client address may hold (across --workers); the next gets a 503 "
                        "(default 64; 0: no cap, as behind a reverse proxy, where every connection comes from the "
                        "proxy)")
    s.add_argument("--quiet", action="store_true", help="no access-log line per request")
    s.add_argument("--rate-limit", type=rate, metavar="N/SECONDS",
                   help="the global limit per world (default 100/60, spec §8)")
    s.add_argument("--operation-limit", type=operation_rate, action="append", metavar="OP=N/SECONDS",
                   help="an extra limit on one operation, e.g. CreateUser=10/60 (repeatable)")
    s.add_argument("--webhook-timeout", type=seconds(above_zero=True), metavar="SECONDS",
                   help="whole-attempt deadline of a webhook delivery: connect, send and answer "
                        "(WEBHOOK_TIMEOUT_SECONDS)")
    s.add_argument("--flush-wait", type=seconds(above_zero=False), metavar="SECONDS",
                   help="longest a POST /_sandbox/webhooks/flush waits for its attempts before answering with what "
                        "is still in flight (default: 3 x --webhook-timeout)")
    s.add_argument("--flush-waiters-per-world", type=int, metavar="N",
                   help="flushes of one world that wait at once; a further one starts what is due and answers at "
                        "once, so no world holds every server thread (FLUSH_WAITERS_PER_WORLD)")
    s.add_argument("--allow-private-callbacks", action=argparse.BooleanOptionalAction, default=None,
                   help="let webhooks call loopback, private and link-local addresses (default: on when bound "
                        "to 127.0.0.1, off otherwise; the sandbox's own echo receiver is always allowed)")
    s.add_argument("--profile", metavar="FILE",
                   help="answer as the deployment this profile was learned from (`ptas conform --profile-out`; "
                        "docs/profiles.md)")
    s.set_defaults(func=serve)


def private_callbacks_default(host):
    """A sandbox only this machine can reach may call this machine's receivers; one bound to other interfaces
    (a team's shared sandbox) must not be a way into its network."""
    return host in ("127.0.0.1", "localhost", "::1")


# option -> app setting; an option left out leaves the setting to app.DEFAULTS
SETTINGS = {"max_worlds": "MAX_WORLDS", "world_idle_hours": "WORLD_IDLE_HOURS",
            "echo_captures_per_bin": "ECHO_CAPTURES_PER_BIN", "echo_capture_max_bytes": "ECHO_CAPTURE_MAX_BYTES",
            "echo_total_bytes": "ECHO_TOTAL_BYTES",
            "webhook_timeout": "WEBHOOK_TIMEOUT_SECONDS", "flush_wait": "FLUSH_WAIT_SECONDS",
            "flush_waiters_per_world": "FLUSH_WAITERS_PER_WORLD"}


def serve(args):
    from ptas_sandbox.simulator.serving import raise_descriptor_limit, tune_malloc

    tune_malloc()               # before the threads and the first large blocks
    raise_descriptor_limit()    # room for the front's connections
    state = check(args)
    start(args, state, settings(args, state))


def is_postgres(state):
    return state.startswith(("postgresql://", "postgres://"))


def check(args):
    """The options as one consistent launch, or one line and exit 2; locks a SQLite state file for this launch.
    Returns the store location."""
    from ._workers import lock_state

    state = args.store or args.state
    try:
        socket.getaddrinfo(args.host, None)
    except (OSError, UnicodeError):
        fail(f"--host {args.host!r} is no address of this machine nor a name that resolves; e.g. 127.0.0.1 or "
             "0.0.0.0")
    if args.workers > 1 and state == ":memory:":
        fail("--workers needs a store they can share (a SQLite file or postgresql://...)")
    if state != ":memory:" and not is_postgres(state):
        if os.path.isdir(state):
            fail(f"the state path {state!r} is a folder; give a file, e.g. {os.path.join(state, 'sandbox.db')}")
        try:
            os.makedirs(os.path.dirname(os.path.abspath(state)), exist_ok=True)
            lock_state(state)       # exits 2 when another server runs on this state file
        except OSError as error:
            # makedirs of a folder whose path runs through a file says "File exists", which names nothing wrong
            blocking = next((p for p in parents(state) if os.path.isfile(p)), None)
            fail(f"cannot use the state path {state!r}: " +
                 (f"{blocking!r} is a file, not a folder" if blocking else str(error.strerror or error)))
    if args.scenario:
        from ptas_sandbox.simulator.tools.scenarios import catalogue
        names = [name for name, _ in catalogue()]
        if args.scenario not in names:
            fail(f"no scenario named {args.scenario!r}; one of: {', '.join(names)} (see `ptas scenarios`)")
    return state


def settings(args, state):
    """The app's configuration: what the options say, and nothing where they say nothing."""
    allow_private = args.allow_private_callbacks
    if allow_private is None:
        allow_private = private_callbacks_default(args.host)
    # Seeds make data and ids reproducible, never secrets; without --seed every server gets its own ids.
    seed = secrets.randbelow(2**31) if args.seed is None else args.seed
    config = {"STATE": state, "SEED": seed, "ADMIN_KEY": args.admin_key or None, "OPEN": args.open,
              "ALLOW_PRIVATE_CALLBACKS": allow_private,
              "SHARED_STORE": args.workers > 1}      # several processes: per-request state stays in the store
    config.update({key: getattr(args, option) for option, key in SETTINGS.items()
                   if getattr(args, option) is not None})
    if args.retention_days is not None:
        config["RETENTION_SECONDS"] = round(args.retention_days * 86400)
    if args.rate_limit:
        config["RATE_LIMIT"], config["RATE_WINDOW_SECONDS"] = args.rate_limit
    if args.operation_limit:
        config["OPERATION_LIMITS"] = dict(args.operation_limit)
    if args.profile:
        from ptas_sandbox.profile import ProfileError, load
        try:
            config["PROFILE"] = load(args.profile)
        except ProfileError as error:
            fail(str(error))
    return config


def open_app(config, state):
    """The app on its store, or one line and exit 2 when the store cannot be used (PostgreSQL unreachable or
    refusing the password, a state file of an older version or not writable); the URL's password masked."""
    import sqlite3

    from ptas_sandbox.simulator import create_app
    from ptas_sandbox.simulator.problems import Problem
    from ptas_sandbox.simulator.store import StaleState, masked

    failures: tuple = (sqlite3.Error, StaleState, Problem, OSError)
    if is_postgres(state):
        import psycopg
        failures += (psycopg.Error,)
    try:
        return create_app(config)
    except failures as error:
        detail = (getattr(error, "cause", None) or getattr(error, "detail", None) or " ".join(str(error).split())
                  or type(error).__name__)
        what = f"the store {masked(state)}" if is_postgres(state) else f"the state file {state!r}"
        fail(f"cannot use {what}: {masked(detail)}")


def start(args, state, config):
    from ptas_sandbox.simulator.store import masked

    from ._workers import run_gunicorn

    app = open_app(config, state)
    from ptas_sandbox.simulator.operations import REGISTRY
    unknown = sorted(set(config.get("OPERATION_LIMITS", {})) - set(REGISTRY))
    sandbox = app.extensions["ptas"]
    if unknown:
        sandbox.close()
        fail(f"--operation-limit names no operation: {', '.join(unknown)} (operationIds are in /openapi.json)")
    result = None
    if args.scenario:
        from ptas_sandbox.simulator.tools.scenarios import load, resume
        with app.app_context():
            # A restart on the same state file goes on with the world it loaded, rather than add another.
            result = resume(sandbox, args.scenario, seed=args.seed) or load(sandbox, args.scenario, seed=args.seed)
    shown = masked(state)
    if args.workers > 1:
        # This process owns the launch (and the state file's lock); attempts cut off by a stop of an earlier
        # launch of a SQLite state went out again when the app above was made. Workers must not requeue: on a
        # shared store that would take attempts other processes are sending.
        sandbox.close()

        def ready(arbiter):
            port = arbiter.LISTENERS[0].sock.getsockname()[1] if arbiter.LISTENERS else args.port
            base, elsewhere = addresses(args.host, port)
            print(f"ptas-sandbox simulator on {base} ({args.workers} workers, state: {shown}){elsewhere}", flush=True)
            if result:
                print(f"scenario {args.scenario}: partner token {result['accessToken']}", flush=True)
        run_gunicorn({**config, "REQUEUE_ON_START": False}, args.host, args.port, args.workers, on_ready=ready,
                     connections_per_address=args.connections_per_address)
        return
    from ptas_sandbox.simulator.serving import CONNECTIONS_PER_ADDRESS, create_server, freeze_start_up
    wsgi = app
    if not args.quiet:
        from ._accesslog import AccessLog
        wsgi = AccessLog(app, sandbox.system_time)
    per_address = CONNECTIONS_PER_ADDRESS if args.connections_per_address is None else args.connections_per_address
    try:
        server = create_server(wsgi, host=args.host, port=args.port, threads=8, connections_per_address=per_address)
    except ValueError:      # waitress: a host that resolves but is no address to bind
        sandbox.close()
        fail(f"cannot listen on {args.host}:{args.port}: not an address to bind; e.g. 127.0.0.1 or 0.0.0.0")
    except OSError as error:
        sandbox.close()
        if error.errno == errno.EADDRINUSE:
            fail(f"port {args.port} on {args.host} is in use; choose another with --port (0: any free port)")
        fail(f"cannot listen on {args.host}:{args.port}: {error.strerror or error}")
    base, elsewhere = addresses(args.host, server.effective_port)
    seed = config["SEED"]
    seeded = f"seed {seed}" + ("" if args.seed is not None else f", random: --seed {seed} reproduces it")
    key = ' -H "X-Sandbox-Admin-Key: $PTAS_ADMIN_KEY"' if args.admin_key and not args.open else ""
    # A key from --admin-key: the line must neither print it nor lean on a variable this shell may not have.
    first = "export PTAS_ADMIN_KEY=<the key given to --admin-key>; " \
        if key and os.environ.get("PTAS_ADMIN_KEY") != args.admin_key else ""
    ptas = spelling()       # the README's spelling after `make serve`: .venv/bin/ptas
    print(f"ptas-sandbox simulator on {base} (state: {shown}; {seeded})\n"
          f"  create a world:  {first}curl -X POST{key} {base}/_sandbox/partners\n"
          f"  API reference:   {base}/docs\n"
          f"  see a world:     {ptas} inspect | {ptas} requests -f  (--url {base} --token TOKEN){elsewhere}",
          flush=True)
    if result:      # after the address, so the first line always names the port
        kept = f" (world {result['world']['id']}, kept in {shown})" if result.get("resumed") else ""
        print(f"scenario {args.scenario}{kept}: partner token {result['accessToken']}", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    freeze_start_up()
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
        sandbox.close()


def number(convert, fits, wanted):
    """An argparse type: the text as `convert` reads it when it `fits`, else "TEXT: `wanted`" (argparse exits 2)."""
    def parse(text):
        try:
            value = convert(text)
        except ValueError:
            value = None
        if value is None or not fits(value):
            raise argparse.ArgumentTypeError(f"{text!r}: {wanted}")
        return value
    return parse


# A negative idle time would count a world called a minute ago as unused.
hours = number(float, lambda v: 0 <= v < float("inf"), "write a number of hours, 0 or more, e.g. 24")
# The socket layer would take 99999 as port 34463 without a word.
port = number(int, lambda v: 0 <= v <= 65535, "write a port from 0 (any free port) to 65535")


def count(least):
    """An integer of at least `least`: --workers 0 would quietly serve as 1, a negative cap would refuse all."""
    return number(int, lambda v: v >= least, f"write a whole number, {least} or more")


def seconds(above_zero):
    """A number of seconds: a deadline of 0 or less would fail every webhook attempt at once; a flush may wait 0
    (it answers at once with what is in flight), never less."""
    return number(float, lambda v: (0 < v if above_zero else 0 <= v) and v != float("inf"),
                  f"write a number of seconds, {'above 0' if above_zero else '0 or more'}, e.g. 10")


def rate(text):
    """`N/SECONDS`, e.g. 100/60: at most N requests in any window of SECONDS (spec §8)."""
    count, slash, seconds = text.partition("/")
    try:
        value = (int(count), int(seconds))
    except ValueError:
        value = None
    if not slash or value is None or value[0] < 1 or value[1] < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: write N/SECONDS with positive integers, e.g. 100/60")
    return value


def operation_rate(text):
    """`OPERATION=N/SECONDS`, e.g. CreateUser=10/60: an extra limit on one operation (spec §8)."""
    name, equals, limit = text.partition("=")
    if not equals or not name.strip():
        raise argparse.ArgumentTypeError(f"{text!r}: write OPERATION=N/SECONDS, e.g. CreateUser=10/60")
    return name.strip(), rate(limit)
