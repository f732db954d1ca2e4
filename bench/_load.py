"""The load generator of the throughput benchmarks: `wrk` (Debian's, which `make bench` installs) when it is on
the PATH, else a Python client; both keep CONNECTIONS keep-alive connections busy for a number of seconds.

Which one matters on a 2-core machine: the Python client spends about a millisecond of CPU per request, as much as
the server, on the same cores. It hides the server's cost (a server twice as costly loses far less than half its
throughput) and leaves a second worker no core to use. `wrk` spends a few microseconds, so its figures are the
server's. Each result says which generator made it; set PTAS_BENCH_CLIENT=python to compare.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time

import requests

CONNECTIONS = 8


def generator():
    if os.environ.get("PTAS_BENCH_CLIENT") != "python" and shutil.which("wrk"):
        return "wrk"
    return "python"


def rate(method, url, seconds, headers=None, body=None, connections=CONNECTIONS, authorizations=()):
    """2xx answers per second of `method url` (with a JSON `body`) through `connections` connections; with
    `authorizations`, the requests take these Authorization headers in turn (say, one token per world)."""
    run = _wrk if generator() == "wrk" else _python
    return run(method, url, seconds, dict(headers or {}), body, connections, list(authorizations))


def _wrk(method, url, seconds, headers, body, connections, authorizations):
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as script:
        script.write(f"wrk.method = {json.dumps(method)}\n")
        if body is not None:
            headers["Content-Type"] = "application/json"
            script.write(f"wrk.body = {json.dumps(json.dumps(body))}\n")
        for name, value in headers.items():
            script.write(f"wrk.headers[{json.dumps(name)}] = {json.dumps(value)}\n")
        if authorizations:
            script.write("local auth, n = {" + ", ".join(json.dumps(a) for a in authorizations) + "}, 0\n"
                         "request = function()\n  n = n % #auth + 1\n  wrk.headers[\"Authorization\"] = auth[n]\n"
                         "  return wrk.format()\nend\n")
        script.flush()
        out = subprocess.run(["wrk", "-t1", f"-c{connections}", f"-d{max(1, round(seconds))}s", "-s", script.name, url],
                             capture_output=True, text=True, check=True).stdout
    total = re.search(r"(\d+) requests in ([\d.]+)(m?s)", out)
    if total is None:
        raise RuntimeError(f"wrk said: {out}")
    duration = float(total.group(2)) / (1000 if total.group(3) == "ms" else 1)
    refused = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return (int(total.group(1)) - (int(refused.group(1)) if refused else 0)) / duration


def _python(method, url, seconds, headers, body, connections, authorizations):
    counts, stop = [], time.perf_counter() + seconds

    def client():
        session, n = requests.Session(), 0
        while time.perf_counter() < stop:
            if authorizations:
                headers["Authorization"] = authorizations[n % len(authorizations)]
            try:
                if session.request(method, url, json=body, headers=dict(headers), timeout=30).status_code < 300:
                    n += 1
            except requests.RequestException:
                pass
        session.close()
        counts.append(n)
    threads = [threading.Thread(target=client) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(counts) / seconds
