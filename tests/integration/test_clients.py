"""The report proved on partner clients it was not tuned to (issue 21): two careful clients (one recovering from
every fault type, one multi-threaded) get no finding at all, with no faults and with each fault type the
sandbox injects; two naive clients get each server-visible mistake they make as one finding. Two more run for
hours of world time, with two fault types each (their runs are the longest): an event-driven careful client,
under a global limit tight enough that it meets it, gets no finding; a cron job gets each of its mistakes. The
clients are in tests/integration/clients/ (each module says what it does)."""

import xml.etree.ElementTree as ET
from collections import Counter

import pytest

from ptas_sandbox.cli import main
from tests.integration.clients.careful import CarefulClient
from tests.integration.clients.harness import RUNS, Run, Sandbox
from tests.integration.clients.naive_polling import CronPoller
from tests.integration.clients.naive_tokens import TokenHoarder
from tests.integration.clients.naive_webhooks import WebhookMisuser
from tests.integration.clients.reactive import ReactiveClient
from tests.integration.clients.threaded import ThreadedClient


@pytest.fixture(scope="module")
def tight_sandbox():
    """Spec §8's global limit at 5 requests a minute: a client meets it, not only the 429s a fault injects."""
    sandbox = Sandbox(rate_limit=5)
    yield sandbox
    sandbox.close()


@pytest.mark.parametrize("run", RUNS, indirect=True)
@pytest.mark.parametrize("client", [CarefulClient, ThreadedClient], ids=["careful", "threaded"])
def test_a_careful_client_gets_no_finding(run, client):
    assert client(run).main(run.token) > 0            # it did its job: transactions read
    report = run.report()
    assert report["findings"] == [], [(f["rule"], f["message"]) for f in report["findings"]]
    assert report["judged"]["requests"] >= 10


@pytest.mark.parametrize("run", RUNS, indirect=True)
@pytest.mark.parametrize("client", [TokenHoarder, WebhookMisuser], ids=["tokens", "webhooks"])
def test_a_naive_client_is_told_each_mistake_once(run, client):
    naive = client(run)
    try:
        naive.main(run.token)
    except Exception:                   # naive code breaks on a bad day; what it did until then is judged
        assert run.report()["judged"]["requests"] > 0
    findings = run.report()["findings"]
    found = Counter(f["rule"] for f in findings)
    assert naive.made <= set(found), naive.made - set(found)
    assert [rule for rule, n in found.items() if n > 1 and rule != "refused-repeated"] == []
    assert all(f["evidence"] and f["fix"] and f["count"] >= 1 for f in findings)


@pytest.mark.parametrize("fault", ["status-429", "duplicate"])
def test_an_event_driven_client_under_a_tight_global_limit_gets_no_finding(tight_sandbox, fault):
    """It renews hour-long user tokens when they are about to expire, reads an account's statistics once per
    TransactionsImported, and holds every request after any 429: none of it is a mistake."""
    run = Run(fault, sandbox=tight_sandbox)
    try:
        assert ReactiveClient(run).main(run.token) > 0
        report = run.report()
        assert report["findings"] == [], [(f["rule"], f["message"]) for f in report["findings"]]
        refused = run.control("GET", "/_sandbox/requests", params={"status": 429, "limit": 1000})["requests"]
        assert any(r["marks"].get("rateLimit") == "global" for r in refused)      # it met the global limit
    finally:
        run.close()


@pytest.mark.parametrize("run", ["no-faults", "bad-signature"], indirect=True)
def test_a_cron_job_is_told_each_mistake(run):
    naive = CronPoller(run)
    naive.main(run.token)
    findings = {f["rule"]: f for f in run.report()["findings"]}
    bad_signature = {"bad-signature-accepted"} if run.fault == "bad-signature" else set()
    assert set(findings) == naive.made | bad_signature
    assert set(findings["polling-instead-of-webhook"]["paths"]) == naive.polled    # transactions and statistics
    assert "global rate limit" in findings["retry-after-ignored"]["message"]


def test_on_a_good_day_the_naive_clients_get_exactly_their_mistakes(sandbox):
    for client in (TokenHoarder, WebhookMisuser):
        run = Run(sandbox=sandbox)
        try:
            naive = client(run)
            naive.main(run.token)
            assert run.rules() == naive.made
        finally:
            run.close()


def test_the_documented_ci_recipe_passes_a_careful_client(sandbox, monkeypatch, tmp_path):
    """docs/chaos.md's CI job, unchanged: the world key in PTAS_WORLD_KEY, the client under test given the
    access token (it rotates it and revokes the initial one), then `ptas report --fail-on warning --junit`."""
    run = Run("status-503", sandbox=sandbox)
    try:
        monkeypatch.setenv("PTAS_URL", run.base)
        monkeypatch.setenv("PTAS_WORLD_KEY", run.key)
        CarefulClient(run).main(run.token)
        junit = tmp_path / "report.xml"
        assert main(["report", "--fail-on", "warning", "--junit", str(junit)]) == 0
        cases = list(ET.parse(junit).iter("testcase"))
        assert cases and all(c.find("failure") is None for c in cases)
    finally:
        run.close()
