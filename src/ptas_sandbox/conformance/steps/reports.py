"""Steps of the report features: reports of an account and the transactions that link to them (spec §1
capability 6, §2 transaction and report resources, §4.3 GetReports, GetReport, the reportId search)."""

from pytest_bdd import then, when

from .. import checks
from ..scene import check
from . import phrase
from .accounts import account_id, await_data
from .dataimports import every_entry_reports
from .transactions import transactions


@when(phrase('I list the reports of the account "{label}"'))
def list_reports(scene, label):
    scene.call("GetReports", params={"id": account_id(scene, label)})


@then("every report reports errors and warnings", target_fixture="report")
def reports_report(scene):
    return every_entry_reports(scene, "reports", "a type with reports has reports once time has passed")


@when("I read that report")
def read_report(scene, report):
    scene.call("GetReport", params={"id": scene.id_of(report, "GetReport")})


@then("some transaction links to a report", target_fixture="linked_report")
def links_report(scene):
    linked = [t for t in transactions(scene.reply) if t.get("reportId")]
    check(linked, "transactions of a type with reports carry a reportId link (spec §2)")
    return linked[0]["reportId"]


@when(phrase('I search the transactions of the account "{label}" by that report'))
def search_by_report(scene, label, linked_report):
    scene.call("GetTransactions", params={"id": account_id(scene, label)}, query={"reportId": linked_report})


@then("every transaction found links to that report")
def all_linked(scene, linked_report):
    rows = transactions(scene.reply)
    check(rows, "the search by reportId finds the transactions of that report")
    others = {t.get("reportId") for t in rows} - {linked_report}
    check(not others, f"the reportId search returned transactions of other reports: {sorted(map(str, others))}")


def has_reports(scene, account):
    reply = scene.client.call("GetReports", token=scene.token, params={"id": account})
    return reply.ok and bool(checks.entries(reply.body, "reports"))


@when(phrase('the account "{label}" has received a report'))
def received_report(scene, label):
    """Reports come when the provider delivers them (the dummy-report type: after two days). A simulator moves its
    clock 48 h; on a deployment the run reuses an account that holds reports, else lists the account's reports
    at growing intervals from a minute within the run's budget (accounts.await_data)."""
    if scene.target.simulator:
        scene.time_passes(172800)
        return
    await_data(scene, label, "reports", lambda account: has_reports(scene, account),
               lambda waited: max(60.0, waited / 4))
