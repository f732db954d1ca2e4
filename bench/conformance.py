"""The conformance suites' speed: the whole @contract suite against the in-process simulator must take under a
minute on a 2-core machine. Also times every scenario in-process and over HTTP (a served simulator), so the
cost of the network path shows as a ratio.
Run: `python -m bench.conformance`.
"""

import io
import re
import threading
import time

from werkzeug.serving import WSGIRequestHandler, make_server

from ptas_sandbox.conformance import runner
from ptas_sandbox.simulator import create_app

BUDGET = 60.0


class Counted:
    """Counts the requests reaching the simulator."""

    def __init__(self, app):
        self.app, self.requests = app, 0

    def __call__(self, environ, start_response):
        self.requests += 1
        return self.app(environ, start_response)


class Quiet(WSGIRequestHandler):
    def log_request(self, *args, **kwargs):
        pass


def timed(label, **options):
    out = io.StringIO()
    started = time.perf_counter()
    status = runner.run(out=out, **options)
    seconds = time.perf_counter() - started
    last = out.getvalue().strip().splitlines()[-1]
    passed = int(re.match(r"(\d+) passed", last).group(1))
    print(f"{label:44} {seconds:6.2f} s  {passed:4d} scenarios  {1000 * seconds / max(passed, 1):6.1f} ms each"
          f"  (exit {status}: {last})", flush=True)
    return seconds, passed


def main():
    app = create_app({"STATE": ":memory:", "START_SERVICES": False})
    counted = Counted(app)
    contract, scenarios = timed("@contract, in-process simulator", app=counted, tags_expression="contract")
    print(f"{'':44} {counted.requests} requests, {1000 * contract / counted.requests:.2f} ms per request "
          f"(harness and pytest included)")
    every, _ = timed("every scenario, in-process simulator", app=app)

    served = create_app({"STATE": ":memory:", "START_SERVICES": False})
    server = make_server("127.0.0.1", 0, served, threaded=True, request_handler=Quiet)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        over_http, _ = timed("every scenario, simulator over HTTP", target=f"http://127.0.0.1:{server.server_port}")
    finally:
        server.shutdown()
        thread.join()
        served.extensions["ptas"].close()
    app.extensions["ptas"].close()
    print(f"\n@contract in-process: {contract:.1f} s of a {BUDGET:.0f} s budget "
          f"({contract / BUDGET:.0%}); {'within' if contract < BUDGET else 'OVER'} budget")
    print(f"over HTTP / in-process (every scenario): {over_http / every:.1f}x")


if __name__ == "__main__":
    main()
