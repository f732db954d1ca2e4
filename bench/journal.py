"""What the request journal costs: an authenticated read (GET /partners/self) journaled vs not, same app.

In-process through the WSGI test client, so the figure is the journal's share of the simulator's own work
(HTTP would dilute it); interleaved rounds so machine noise hits both alike. Run: `python -m bench.journal [n]`.
"""

import statistics
import sys
import time

from ptas_sandbox.simulator import create_app
from ptas_sandbox.simulator.tools.journal import service


def measure(client, headers, n):
    started = time.perf_counter()
    for _ in range(n):
        assert client.get("/partner/v2/partners/self", headers=headers).status_code == 200
    return (time.perf_counter() - started) / n


def main(n=None):
    n = n or (int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 2000)
    app = create_app({"RATE_LIMIT": 10**9, "START_SERVICES": False, "JOURNAL_LIMIT": 1000})
    client = app.test_client()
    token = client.post("/_sandbox/partners", json={"name": "Bench"}).json["accessToken"]
    headers = {"Authorization": f"Bearer {token}"}
    runs = {"journaled": [], "not journaled": []}
    try:
        for _ in range(4):
            service.NOT_JOURNALED.discard("GetOwnPartner")
            runs["journaled"].append(measure(client, headers, n // 4))
            service.NOT_JOURNALED.add("GetOwnPartner")
            runs["not journaled"].append(measure(client, headers, n // 4))
    finally:
        service.NOT_JOURNALED.discard("GetOwnPartner")
        app.extensions["ptas"].close()
    median = {name: statistics.median(times) for name, times in runs.items()}
    for name, seconds in median.items():
        print(f"GET /partners/self, {name:14} {seconds * 1e6:8.0f} us per call")
    print(f"journaled / not journaled: {median['journaled'] / median['not journaled']:.2f}x")


if __name__ == "__main__":
    main()
