"""Reports (spec §2, §4.3): dummy-report settles each day in a report its transactions link to."""

import json

import pytest

from tests.support.accounts import all_pages, connect, imported, long_lived_user
from tests.support.problems import assert_problem


@pytest.fixture
def jane(world):
    return long_lived_user(world)


@pytest.fixture
def account(world, jane):
    return imported(world.api, jane[1], "dummy-report", seconds=10)


def test_dummy_report_produces_a_report_per_past_day(jane, account):
    reports = jane[1].get(f"/accounts/{account['id']}/reports").json["reports"]
    assert len(reports) in (14, 15)
    for report in reports:
        assert report["accountId"] == account["id"] and report["errors"] == [] and report["warnings"] == []
        assert report["transactionCount"] > 0 and report["periodStart"] < report["periodEnd"]


def test_transactions_link_to_their_report_and_report_id_search_finds_them(jane, account):
    _, api = jane
    report = api.get(f"/accounts/{account['id']}/reports").json["reports"][3]
    found, _ = all_pages(api, account["id"], f"&reportId={report['id']}")
    assert len(found) == report["transactionCount"]
    assert {t["reportId"] for t in found} == {report["id"]}
    assert all(report["periodStart"] <= t["createdAt"] < report["periodEnd"] for t in found)


def test_today_is_not_yet_reported(jane, account):
    transactions, _ = all_pages(jane[1], account["id"])
    assert transactions[-1]["reportId"] is None and transactions[0]["reportId"] is not None


def test_the_next_day_brings_yesterdays_report(world, jane, account):
    _, api = jane
    before = len(api.get(f"/accounts/{account['id']}/reports").json["reports"])
    world.api.advance(86400)
    assert len(api.get(f"/accounts/{account['id']}/reports").json["reports"]) == before + 1


def test_get_report_reads_one(jane, account):
    _, api = jane
    report = api.get(f"/accounts/{account['id']}/reports").json["reports"][0]
    assert api.get(f"/reports/{report['id']}").json == report


def test_transactions_imported_names_the_report(app, account):
    rows = app.extensions["ptas"].store.all("SELECT data FROM events WHERE kind = 'TransactionsImported'")
    data = json.loads(rows[0]["data"])
    assert data["report"]["accountId"] == account["id"] and data["dataImport"]["reportIds"][-1] == data["report"]["id"]


def test_report_of_another_user_is_not_found(world, jane, account):
    report = jane[1].get(f"/accounts/{account['id']}/reports").json["reports"][0]
    _, joe = world.user(name="Joe")
    assert_problem(joe.get(f"/reports/{report['id']}"), 404)
    assert_problem(joe.get(f"/accounts/{account['id']}/reports"), 404)


def test_report_id_of_another_account_finds_nothing(world, jane, account):
    _, api = jane
    other = imported(world.api, api, seconds=5)
    report = api.get(f"/accounts/{account['id']}/reports").json["reports"][0]
    assert api.get(f"/accounts/{other['id']}/transactions?reportId={report['id']}").json["transactions"] == []


def test_types_without_reports_have_none(world, jane):
    account = imported(world.api, jane[1], seconds=5)
    assert jane[1].get(f"/accounts/{account['id']}/reports").json["reports"] == []


def test_degraded_marketplace_reports_carry_warnings(world, jane):
    _, api = jane
    account = connect(api, "sample-marketplace", {"sellerId": "S1", "region": "eu", "refreshToken": "t"})
    world.api.advance(7200)
    reports = api.get(f"/accounts/{account['id']}/reports").json["reports"]
    assert reports and reports[0]["warnings"]


def test_reports_need_transaction_read(world, account):
    token = world.new_token("account:all")
    assert_problem(world.api.as_(token).get(f"/accounts/{account['id']}/reports"), 403)
