"""Steps of the report features: reports of an account and the transactions that link to them (spec §1
capability 6, §2 transaction and report resources, §4.3 GetReports, GetReport, the reportId search)."""

from pytest_bdd import then, when

from .. import checks
from ..scene import check
from . import acting, phrase
from .accounts import account_id, await_data
from .dataimports import every_entry_reports
from .transactions import ids, pages_of, transactions

# Reports of a page whose reportId search is checked: a day's report each, so a first page names a handful.
REPORTS = 10


@when(phrase('I list the reports of the account "{label}"'))
def list_reports(scene, label):
    scene.call("GetReports", params={"id": account_id(scene, label)})


@then("every report reports errors and warnings", target_fixture="report")
def reports_report(scene):
    return every_entry_reports(scene, "reports", "a type with reports has reports once time has passed")


@when("I read that report")
def read_report(scene, report):
    scene.call("GetReport", params={"id": scene.id_of(report, "GetReport")})


@when(acting('{actor} reads the first report of the account "{label}" on its own'))
def read_first_report(scene, actor, label):
    """The first report I list of the account, then read by its id alone (GetReport) by `actor`: a user token
    of another user reaches no report of an account it did not create (spec §1), on this path too."""
    listed = scene.must(scene.client.call("GetReports", token=scene.token, params={"id": account_id(scene, label)}),
                        "list the account's reports")
    found = checks.items(listed, "reports")
    check(found, "a type with reports has reports once time has passed")
    scene.call("GetReport", actor, params={"id": scene.id_of(found[0], "GetReport")})


@then("some transaction links to a report", target_fixture="linked_report")
def links_report(scene):
    linked = [t for t in transactions(scene.reply) if t.get("reportId")]
    check(linked, "transactions of a type with reports carry a reportId link (spec §2)")
    return linked[0]["reportId"]


@when(phrase('I search the transactions of the account "{label}" by each report they link to'),
      target_fixture="searches")
def search_by_each_report(scene, label):
    """A reportId search, every page of it, for each report the page read links to (the first REPORTS of them):
    with what the page showed linking to it."""
    linked = {}
    for row in transactions(scene.reply):
        if row.get("reportId"):
            linked.setdefault(row["reportId"], []).append(row)
    check(linked, "transactions of a type with reports carry a reportId link (spec §2)")
    return {report: ([row for page in pages_of(scene, label, {"reportId": report}) for row in transactions(page)],
                     rows) for report, rows in list(linked.items())[:REPORTS]}


@then("each search finds every transaction of the page that links to its report, and only such transactions")
def searches_match_links(scene, searches):
    """The link and the search say the same thing (spec §2 reportId link, §4.3 reportId search), both ways."""
    for report, (found, linking) in searches.items():
        others = {row.get("reportId") for row in found} - {report}
        check(not others, f"the search by report {report} returned transactions of other reports: "
                          f"{sorted(map(str, others))}")
        found_ids = set(ids(scene, found))
        missing = [each for each in ids(scene, linking) if each not in found_ids]
        check(not missing, f"{len(missing)} of the {len(linking)} transactions of the page that link to report "
                           f"{report} are not found by the search by that report (e.g. {missing[:1]})")


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
