"""`ptas conform`: the suites run by pytest in this process against the chosen target, with progress, a
summary per spec area, JUnit XML and Cucumber JSON reports, and an exit status CI can gate on.
"""

import json
import os
import sys
import tempfile
import time
from collections import Counter, defaultdict

import pytest

from . import FEATURES, tags
from .harness import ChosenTarget
from .redact import redact, redact_file
from .targets import TargetError, in_process, open_target

SUITE = '''"""The conformance suites: every feature, bound to the steps of the harness plugin."""
from pytest_bdd import scenarios

from ptas_sandbox.conformance import FEATURES

scenarios(FEATURES)
'''


def main(args):
    """Entry point of `ptas conform` (options parsed in ptas_sandbox/cli.py)."""
    return run(target=args.target, token=args.token, openapi=args.openapi, tags_expression=args.tags,
               report_dir=args.report_dir, slow=args.slow)


def run(target="sim", token=None, openapi=None, tags_expression=None, report_dir=None, slow=False, app=None,
        out=None):
    """Run the suites; 0 only when every selected scenario passed. `app` runs them against a WSGI app in
    this process instead (the project's tests use it for deliberately broken targets)."""
    out = out or sys.stdout
    unknown = tags.unknown_in(tags_expression or "")
    if unknown:
        print(f"ptas conform: unknown tag(s) {', '.join(unknown)}; tags are {', '.join(tags.names())}", file=out)
        return 2
    try:
        chosen = in_process(app, openapi=openapi, name="wsgi") if app is not None else \
            open_target(target, token, openapi)
    except TargetError as error:
        print(f"ptas conform: {redact(error)}", file=out)
        return 2
    reporter = Reporter(out, chosen, slow)
    with tempfile.TemporaryDirectory(prefix="ptas-conform-") as work:
        suite = os.path.join(work, "test_conformance_suite.py")
        with open(suite, "w", encoding="utf-8") as handle:
            handle.write(SUITE)
        arguments = [suite, "-p", "ptas_sandbox.conformance.harness", "-p", "no:terminal",
                     "-p", "no:cacheprovider", "-c", os.devnull, "--rootdir", work, "--confcutdir", work,
                     "--import-mode=importlib", "-o", "addopts=", "--strict-markers"]
        if tags_expression:
            arguments += ["-m", tags_expression.replace("@", "")]
        if report_dir:
            os.makedirs(report_dir, exist_ok=True)
            arguments += [f"--junitxml={os.path.join(report_dir, 'junit.xml')}",
                          f"--cucumberjson={os.path.join(report_dir, 'cucumber.json')}"]
        print(f"ptas conform: {chosen.describe()}; features in {FEATURES}", file=out, flush=True)
        try:
            status = pytest.main(arguments, plugins=[ChosenTarget(chosen, slow), reporter])
        finally:
            if app is None:
                chosen.close()
    summary = reporter.summary()
    if report_dir:
        for name in ("junit.xml", "cucumber.json"):
            path = os.path.join(report_dir, name)
            if os.path.exists(path):
                redact_file(path)
        with open(os.path.join(report_dir, "summary.txt"), "w", encoding="utf-8") as handle:
            handle.write(summary + "\n")
        with open(os.path.join(report_dir, "summary.json"), "w", encoding="utf-8") as handle:
            json.dump(reporter.as_dict(), handle, indent=2)
    print(summary, file=out, flush=True)
    if status == pytest.ExitCode.NO_TESTS_COLLECTED:
        print("no scenario was selected (check --tags)", file=out)
    elif status not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        print(f"pytest stopped early: {pytest.ExitCode(status).name}", file=out)
    passed, failed = reporter.totals()
    print(f"{passed} passed, {failed} failed", file=out, flush=True)
    return 0 if failed == 0 and passed > 0 and status in (0, 5) and not reporter.errors else 1


class Reporter:
    """Progress while the suites run, then the summary per spec area (a pytest plugin object)."""

    def __init__(self, out, target, slow):
        self.out, self.target, self.slow = out, target, slow
        self.results = {}               # nodeid -> (area, title, outcome, detail)
        self.deselected = []            # (area, reason)
        self.errors = []
        self.total = 0
        self.items = {}
        self.started = time.monotonic()

    def pytest_configure(self, config):
        # Only the crash line reaches the output: native tracebacks spare pytest's source parsing on every failure.
        config.option.tbstyle = "native"

    def pytest_collection_finish(self, session):
        self.items = {item.nodeid: item for item in session.items}
        self.total = len(session.items)
        self.write(f"{self.total} scenarios selected")

    def pytest_deselected(self, items):
        for item in items:
            self.deselected.append((tags.area_of(item), item.stash.get(tags.DESELECTED, "not selected by --tags")))

    def pytest_collectreport(self, report):
        if report.failed:
            self.errors.append(redact(report.longreprtext))
            self.write(f"collection error: {redact(report.longreprtext)[-2000:]}")

    def pytest_runtest_logreport(self, report):
        item = self.items.get(report.nodeid)
        if item is None:
            return
        known = self.results.get(report.nodeid)
        if report.failed:
            outcome, detail = "failed", failure(report)
        elif report.skipped:
            outcome, detail = "skipped", skip_reason(report)
        elif report.when == "call":
            outcome, detail = "passed", ""
        else:
            return
        if known and known[2] == "failed":
            return
        self.results[report.nodeid] = (tags.area_of(item), title(item), outcome, detail)
        if report.when != "teardown" or outcome == "failed":
            done = len(self.results)
            self.write(f"[{done:>4}/{self.total}] {outcome.upper():7} {tags.area_of(item):14} {title(item)}"
                       + (f"\n         {detail}" if outcome != "passed" else ""))

    def write(self, line):
        print(redact(line), file=self.out, flush=True)

    def totals(self):
        counts = Counter(result[2] for result in self.results.values())
        return counts["passed"], counts["failed"] + len(self.errors)

    def per_area(self):
        areas = defaultdict(Counter)
        for area, _, outcome, _ in self.results.values():
            areas[area][outcome] += 1
        return areas

    def summary(self):
        elapsed = time.monotonic() - self.started
        lines = ["", f"summary by spec area ({self.target.describe()}, {elapsed:.1f} s):",
                 f"  {'area':14} {'spec':42} {'passed':>6} {'failed':>6} {'skipped':>7}"]
        for area, counts in sorted(self.per_area().items()):
            lines.append(f"  {area:14} {tags.AREAS.get(area, ''):42} {counts['passed']:>6} {counts['failed']:>6} "
                         f"{counts['skipped']:>7}")
        failures = [r for r in self.results.values() if r[2] == "failed"]
        if failures:
            lines.append("failed:")
            lines += [f"  {area}: {name}\n      {detail}" for area, name, _, detail in failures]
        reasons = Counter((area, d) for area, _, outcome, d in self.results.values() if outcome == "skipped")
        reasons.update(self.deselected)
        if reasons:
            lines.append("skipped or not run, with the reason:")
            lines += [f"  {area}: {count} — {reason}" for (area, reason), count in sorted(reasons.items())]
        return redact("\n".join(lines))

    def as_dict(self):
        return {"target": redact(self.target.describe()),
                "areas": {a: dict(c) for a, c in self.per_area().items()},
                "scenarios": [{"area": a, "scenario": n, "outcome": o, "detail": redact(d)}
                              for a, n, o, d in self.results.values()],
                "notRun": [{"area": a, "reason": r} for a, r in self.deselected]}


def title(item):
    """The scenario's name as the feature says it, outline placeholders filled in."""
    name = (item.obj.__doc__ or item.name).split(": ", 1)[-1]
    example = getattr(item, "callspec", None) and item.callspec.params.get("_pytest_bdd_example")
    if example and "<" not in name:
        return f"{name} ({', '.join(str(v) for v in example.values())})"
    for key, value in (example or {}).items():
        name = name.replace(f"<{key}>", str(value))
    return name


def failure(report):
    step = next((s["name"] for s in getattr(report, "scenario", {}).get("steps", []) if s.get("failed")), None)
    crash = getattr(report.longrepr, "reprcrash", None)
    message = crash.message if crash else str(report.longrepr)
    message = message.replace("AssertionError: ", "").strip().splitlines()
    text = " / ".join(message[:3])[:600]
    return redact(f"at step “{step}”: {text}" if step else text)


def skip_reason(report):
    if isinstance(report.longrepr, tuple):
        return report.longrepr[2].replace("Skipped: ", "")
    return str(report.longrepr)
