"""Reports (spec §2, §4.3): dummy-report settles each day in a report its transactions link to."""

import json
from datetime import datetime, timedelta

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


def test_a_deleted_users_reports_are_not_found(world, jane, account):
    """As its accounts, transactions and data imports: only the user itself stays readable (docs/choices.md)."""
    user, api = jane
    report = api.get(f"/accounts/{account['id']}/reports").json["reports"][0]
    assert world.api.get(f"/reports/{report['id']}").status_code == 200
    assert world.api.delete(f"/users/{user['id']}").status_code == 204
    assert_problem(world.api.get(f"/reports/{report['id']}"), 404)
    assert_problem(world.api.get(f"/accounts/{account['id']}/reports"), 404)


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


def test_a_report_id_names_its_day_and_account_and_nothing_else(world, jane, account):
    _, api = jane
    reports = api.get(f"/accounts/{account['id']}/reports").json["reports"]
    first, second = reports[0]["id"], reports[1]["id"]
    forged = second[:9] + first[9:]          # the second's day with the first's digest: no report of this account
    for ident in (forged, "ffffffff" + first[8:], first[:35], first.upper(), "not-a-report-id"):
        assert_problem(api.get(f"/reports/{ident}"), 404)
    assert api.get(f"/reports/{first}").json == reports[0]


def test_a_centurys_catch_up_makes_the_same_reports_as_day_by_day_imports(world, jane):
    """Reports are drawn from the days an import settled: a long jump and many short ones agree."""
    _, api = jane
    step = connect(api, "dummy-report")
    for _ in range(6):
        world.api.advance(86400)
    _, joe = world.user(name="Joe")
    jump = connect(joe, "dummy-report")
    assert_problem(joe.get(f"/accounts/{step['id']}/reports"), 404)
    mine = api.get(f"/accounts/{step['id']}/reports").json["reports"]
    assert len(mine) == 14 + 6
    world.api.advance(100 * 365 * 86400)
    partner = world.api.as_(world.api.post("/_sandbox/token").json["accessToken"])    # every token expired
    century = partner.get(f"/accounts/{jump['id']}/reports").json["reports"]
    stepped = partner.get(f"/accounts/{step['id']}/reports").json["reports"]
    assert len(century) > 36_500 and len(stepped) == len(century) + 6      # six days older, the same days since
    period = lambda r: (r["name"], r["periodStart"], r["periodEnd"])
    assert [period(r) for r in stepped[6:]] == [period(r) for r in century]
    for reports in (stepped, century):                      # one report a day, oldest first, none empty
        starts = [datetime.fromisoformat(r["periodStart"][:19]) for r in reports]
        assert all(b - a == timedelta(days=1) for a, b in zip(starts, starts[1:]))
        assert all(r["transactionCount"] > 0 for r in reports)
    last = century[-1]
    found, _ = all_pages(partner, jump["id"], f"&reportId={last['id']}")
    assert len(found) == last["transactionCount"] and {t["reportId"] for t in found} == {last["id"]}
