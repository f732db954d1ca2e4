"""The report as text for people and as JUnit XML for CI (one test case per rule; a rule fails when it has a
finding at or above the chosen severity). Pure functions of the report's JSON, shared by the server and `ptas`."""

import xml.etree.ElementTree as ET

from .rules import SEVERITIES, at_or_above


def text(report):
    lines = [f"Integration report of world {report['world']} at {report['generatedAt']}",
             f"judged: {report['judged']['requests']} request(s), {report['judged']['deliveries']} webhook "
             f"attempt(s); findings: " + ", ".join(f"{report['summary'][s]} {s}" for s in reversed(SEVERITIES))]
    left_out = {k: n for k, n in (report["judged"].get("notJudged") or {}).items() if n}
    if left_out:
        lines.append("not judged (not the software under test): "
                     + ", ".join(f"{n} {k} call(s)" for k, n in left_out.items()))
    for f in report["findings"]:
        lines += ["", f"{f['severity'].upper():7} {f['rule']}: {f['title']}", f"  {f['message']}",
                  f"  fix: {f['fix']}"]
        for e in f["evidence"]:
            what = " ".join(str(e[k]) for k in ("method", "path") if e.get(k)) or e.get("deliveryId") or ""
            status = e.get("status")
            lines.append(f"  - {e.get('at')} {e.get('operationId') or e.get('eventType') or ''} {what}"
                         f"{f' → {status}' if status is not None else ''}{' (injected)' if e.get('injected') else ''}")
        if f["count"] > len(f["evidence"]):
            lines.append(f"  … and {f['count'] - len(f['evidence'])} more")
    if not report["findings"]:
        lines += ["", "No findings: every rule passed."]
    return "\n".join(lines) + "\n"


def junit(report, fail_on="warning"):
    """JUnit XML: a test case per rule, failed when it has findings at or above `fail_on` (lower ones go to
    system-out). A rule's findings share its one failure, whose message counts and names each of them: viewers
    (Jenkins, GitLab, GitHub's test reporters) show one failure per test case and drop any further <failure>
    element, and one case per rule keeps the suite's size the same from run to run, so trends compare."""
    failing = {f["rule"] for f in at_or_above(report["findings"], fail_on)}
    suite = ET.Element("testsuite", name="ptas-sandbox integration report", tests=str(len(report["rules"])),
                       failures=str(len(failing)), errors="0", skipped="0", timestamp=report["generatedAt"] or "")
    for rule in report["rules"]:
        case = ET.SubElement(suite, "testcase", classname=f"integration.{rule['severity']}", name=rule["id"])
        mine = [f for f in report["findings"] if f["rule"] == rule["id"]]
        if rule["id"] in failing:
            failure = ET.SubElement(case, "failure", type=rule["severity"], message=failure_message(mine))
            failure.text = text({**report, "findings": mine})
        elif mine:
            ET.SubElement(case, "system-out").text = text({**report, "findings": mine})
    return document(suite)


def failure_message(findings):
    if len(findings) == 1:
        return f"1 finding: {findings[0]['message']}"
    return f"{len(findings)} findings: " + " ".join(f"({n}) {f['message']}" for n, f in enumerate(findings, 1))


def unjudged(reason, at=""):
    """JUnit XML for a report that could not be made (no sandbox, no world, no access): one test case in error,
    so CI shows why instead of a missing file."""
    suite = ET.Element("testsuite", name="ptas-sandbox integration report", tests="1", failures="0", errors="1",
                       skipped="0", timestamp=at)
    case = ET.SubElement(suite, "testcase", classname="integration", name="report")
    ET.SubElement(case, "error", type="unjudged", message=f"the integration report could not be made: {reason}")
    return document(suite)


def document(suite):
    suites = ET.Element("testsuites", name="ptas-sandbox", tests=suite.get("tests"), failures=suite.get("failures"),
                        errors=suite.get("errors"))
    suites.append(suite)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
