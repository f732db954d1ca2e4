"""Snapshot size and time: the `default` scenario (about 20,000 transactions) against `busy-merchant` (a million),
same run. Export (`GET /_sandbox/snapshot`) and load (`POST /_sandbox/snapshots` into a second sandbox) through
the in-process app; prints bytes per transaction and the big-to-small ratios of time and size (a snapshot carries
each account's delivered count, not its transactions, so size and time should stay about flat as transactions
grow). Run: `python -m bench.snapshots`."""

import json
import time

from ptas_sandbox.simulator import create_app
from ptas_sandbox.simulator.tools.snapshots import models


def measure(scenario):
    source = create_app({"START_SERVICES": False})
    target = create_app({"START_SERVICES": False, "SECRET": "another sandbox's secret, long enough for HS256"})
    client = source.test_client()
    token = client.post(f"/_sandbox/scenarios/{scenario}").get_json()["accessToken"]
    headers = {"Authorization": f"Bearer {token}"}
    started = time.perf_counter()
    exported = client.get("/_sandbox/snapshot", headers=headers)
    export_s = time.perf_counter() - started
    assert exported.status_code == 200, exported.get_data(as_text=True)[:300]
    document = exported.get_data()
    tables = json.loads(document)["tables"]
    accounts = tables["accounts"] if isinstance(tables["accounts"], list) else models.unpack(tables["accounts"], "")
    rows = sum(account["delivered"] for account in accounts)
    started = time.perf_counter()
    loaded = target.test_client().post("/_sandbox/snapshots", data=document,
                                       headers={"Content-Type": "application/json"})
    load_s = time.perf_counter() - started
    assert loaded.status_code == 201, loaded.get_data(as_text=True)[:300]
    for app in (source, target):
        app.extensions["ptas"].close()
    return {"transactions": rows, "bytes": len(document), "export_s": export_s, "load_s": load_s}


def main():
    small, big = measure("default"), measure("busy-merchant")
    for name, m in (("default", small), ("busy-merchant", big)):
        print(f"{name:14} {m['transactions']:>9} transactions  {m['bytes'] / 1e6:7.2f} MB  "
              f"{m['bytes'] / max(m['transactions'], 1):5.1f} bytes/transaction")
    print(f"ratios big/small: transactions {big['transactions'] / small['transactions']:.0f}x, "
          f"size {big['bytes'] / small['bytes']:.2f}x, export time {big['export_s'] / small['export_s']:.2f}x, "
          f"load time {big['load_s'] / small['load_s']:.2f}x")


if __name__ == "__main__":
    main()
