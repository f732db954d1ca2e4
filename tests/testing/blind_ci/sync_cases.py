"""My client's sync job under the ptas-sandbox fixtures, gated on the integration report (docs/fixtures.md,
docs/chaos.md)."""
import pytest
from partner_client.careful import CarefulClient
from partner_client.naive import NaiveClient

LOGIN = {"username": "jane", "password": "s3cret"}


@pytest.fixture(params=["careful", "naive"])
def client(request, ptas_sandbox, ptas_partner, ptas_clock):
    ptas_clock.advance_on_sleep()                     # Retry-After waits pass in sandbox time
    cls = CarefulClient if request.param == "careful" else NaiveClient
    return cls(ptas_sandbox.url, ptas_partner.token)


def sync(client, clock, page_size=None):
    client.bootstrap()
    user = client.create_user("Jane", "jane@example.com")
    account = client.connect_dummy_account(user.get("id"), LOGIN)
    clock.advance(3600)                               # the first import has run
    return account, client.list_transactions(account.get("id"), page_size=page_size)


def gate(request, ptas_report, note=""):
    ptas_report.assert_clean(at_least="warning")


def test_sync_no_faults(request, client, ptas_clock, ptas_report):
    account, txns = sync(client, ptas_clock)
    gate(request, ptas_report, f"transactions read: {len(txns)}")


def test_sync_injected_429(request, client, ptas_clock, ptas_faults, ptas_report):
    ptas_faults.status(429, operation="GetTransactions", retry_after=30, times=2)
    account, txns = sync(client, ptas_clock)
    gate(request, ptas_report, f"transactions read: {len(txns)}")


def test_sync_global_rate_limit(request, client, ptas_partner, ptas_clock, ptas_report):
    for _ in range(100):                              # spend the world's §8 budget, as docs/fixtures.md does
        ptas_partner.setup_call("GET", "/partners/self")
    account, txns = sync(client, ptas_clock)
    gate(request, ptas_report, f"transactions read: {len(txns)}; 429s: {ptas_partner.count(status=429)}")


def test_sync_server_errors(request, client, ptas_clock, ptas_faults, ptas_report):
    ptas_faults.add("success-then-500", operation="CreateUser")
    ptas_faults.status(503, operation="GetTransactions", retry_after=30, times=1)
    account, txns = sync(client, ptas_clock)
    gate(request, ptas_report, f"transactions read: {len(txns)}")


def test_sync_dropped_connection(request, client, ptas_clock, ptas_faults, ptas_report):
    ptas_faults.drop(operation="GetTransactions")
    account, txns = sync(client, ptas_clock)
    gate(request, ptas_report, f"transactions read: {len(txns)}")
