"""Nothing a client sends makes the report fail: every operation called with odd paths, queries and bodies (each
field of its body given values of every JSON type, wrong shapes nested in arrays and objects), refused or
answered, and the report is still made in every format."""

import xml.etree.ElementTree as ET

from ptas_sandbox.simulator.operations import REGISTRY
from tests.integration.test_report import harness

ODD = [None, 0, -1, 1.5, "", "x", True, [], [None], [{}], [[1]], [{"a": [1]}], {}, {"a": {"b": []}}]


def bodies(op):
    yield from ODD
    properties = ((op.body or {}).get("properties") or {}) if isinstance(op.body, dict) else {}
    for name in properties:
        for value in ODD:
            yield {name: value}


def path_of(op):
    return "/" + "/".join("x" if part.startswith("{") else part for part in op.path.strip("/").split("/"))


def calls():
    for op in sorted((op for op in REGISTRY.values() if not op.control), key=lambda op: op.id):
        path = path_of(op)
        for body in bodies(op) if op.method in ("POST", "PUT", "PATCH") else [None]:
            yield op.method, path, body
        yield op.method, path + "?pageReference=%7B%7D&userId=&limit=-1&scope=a&scope=b", None


def test_the_report_survives_every_operation_sent_odd_requests(world):
    sent = 0
    for method, path, body in calls():
        world.api.call(method, path.removeprefix(world.api.prefix), json=body)
        sent += 1
        if sent % 90 == 0:
            harness(world).advance(61)          # past spec §8's window: the bodies reach the operations
    assert sent > 500
    for fmt in ("json", "text", "junit"):
        response = harness(world).get("/_sandbox/report", query_string={"format": fmt})
        assert response.status_code == 200, response.get_data(as_text=True)[:2000]
    ET.fromstring(harness(world).get("/_sandbox/report", query_string={"format": "junit"}).get_data())
