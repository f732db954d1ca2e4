"""`ptas conform`: the suites run by pytest in this process against the chosen target, with progress, a
summary per spec area, JUnit XML and Cucumber JSON reports, and an exit status CI can gate on.

What a QA engineer running it against a staging environment expects: the target and the token are checked with
one request before anything runs (a refused token ends the run at once, exit 2); a paced run says how long it
will take; every failure names the step, what was expected in words, and the last request and response (tokens
masked); the last line counts passed, failed and skipped scenarios.
"""

import contextlib
import json
import os
import sys
import tempfile
import time
from collections import Counter, defaultdict
from xml.etree import ElementTree

import pytest

from . import FEATURES, tags
from .harness import ChosenTarget
from .profile_learn import write as write_profile
from .redact import excerpt, redact, redact_file
from .resolver import parse_override
from .targets import TargetError, in_process, open_target

SUITE = '''"""The conformance suites: every feature, bound to the steps of the harness plugin."""
from pytest_bdd import scenarios

from ptas_sandbox.conformance import FEATURES

scenarios(FEATURES)
'''
# Requests a scenario sends on average (measured over the @contract suites); only for the duration estimate.
REQUESTS_PER_SCENARIO = 7


def main(args):
    """Entry point of `ptas conform` (options parsed in ptas_sandbox/cli.py)."""
    return run(target=args.target, token=args.token, openapi=args.openapi, tags_expression=args.tags,
               report_dir=args.report_dir, slow=args.slow, pace=getattr(args, "pace", None),
               as_deployment=getattr(args, "as_deployment", False), options=conform_options(args),
               operations=getattr(args, "operation", None), profile_out=getattr(args, "profile_out", None))


def conform_options(args):
    """The options the steps read (receiver, budgets): anything the target itself does not say."""
    return {name: getattr(args, name) for name in ("receiver_listen", "receiver_url", "max_wait")
            if getattr(args, name, None) is not None}


def run(target="sim", token=None, openapi=None, tags_expression=None, report_dir=None, slow=False, app=None,
        out=None, pace=None, as_deployment=False, options=None, clock=None, only=None, operations=None,
        profile_out=None):
    """Run the suites; 0 only when every selected scenario passed, 2 when the run could not start. `app` runs
    them against a WSGI app in this process instead: a simulator, or (hiding /_sandbox, with `token`) a
    deployment; the project's tests run deliberately broken targets this way, without pacing."""
    out = out or sys.stdout
    unknown = tags.unknown_in(tags_expression or "")
    if unknown:
        print(f"ptas conform: unknown tag(s) {', '.join(unknown)}; tags are {', '.join(tags.names())}", file=out)
        return 2
    try:
        overrides = dict(parse_override(text) for text in operations or ())   # --operation NAME=METHOD PATH
        chosen = in_process(app, openapi=openapi, name="wsgi", token=token, overrides=overrides) \
            if app is not None else open_target(target, token, openapi, pace=pace, as_deployment=as_deployment,
                                                overrides=overrides)
    except (TargetError, ValueError) as error:
        print(f"ptas conform: {redact(error)}", file=out)
        return 2
    if clock is not None:
        chosen.use_clock(clock)
    try:
        note = chosen.check_access()
    except TargetError as error:
        print(f"ptas conform: {redact(error)}", file=out)
        if app is None:
            chosen.close()
        return 2
    chosen.options = dict(options or {})
    receiver = None
    if chosen.options.get("receiver_listen"):
        from .receiver import Receiver
        try:
            receiver = Receiver(chosen.options["receiver_listen"], chosen.options.get("receiver_url"))
        except (OSError, ValueError) as error:
            print(f"ptas conform: cannot listen on {chosen.options['receiver_listen']}: {error}", file=out)
            return 2
        chosen.receiver = receiver
        print(f"ptas conform: webhook receiver listening on {chosen.options['receiver_listen']}, given to the "
              f"target as {receiver.base}/…", file=out, flush=True)
    elif chosen.options.get("receiver_url"):
        print("ptas conform: --receiver-url needs --receiver-listen (where the harness itself listens)", file=out)
        return 2
    reporter = Reporter(out, chosen, slow, tags_expression, only)
    with tempfile.TemporaryDirectory(prefix="ptas-conform-") as work:
        suite = os.path.join(work, "test_conformance_suite.py")
        with open(suite, "w", encoding="utf-8") as handle:
            handle.write(SUITE)
        # Only the plugins the suites need (pytest-bdd, the tag markers, the harness): whatever else is installed
        # (schemathesis, playwright, ...) is not loaded, which spares seconds at every start.
        arguments = [suite, "-p", "pytest_bdd.plugin", "-p", "ptas_sandbox.testing.plugin",
                     "-p", "ptas_sandbox.conformance.harness", "-p", "no:terminal",
                     "-p", "no:cacheprovider", "-c", os.devnull, "--rootdir", work, "--confcutdir", work,
                     "--import-mode=importlib", "-o", "addopts=", "--strict-markers"]
        if tags_expression:
            arguments += ["-m", tags_expression.replace("@", "")]
        if report_dir:
            os.makedirs(report_dir, exist_ok=True)
            arguments += [f"--cucumberjson={os.path.join(report_dir, 'cucumber.json')}"]
        print(f"ptas conform: {chosen.describe()}; features in {FEATURES}", file=out, flush=True)
        if token and chosen.simulator:
            print("ptas conform: the target is a simulator (it answers /_sandbox/health): every scenario runs in "
                  "a fresh world its control API creates, so the token was only checked, not used; "
                  "--as-deployment runs what a deployment runs, with this token", file=out, flush=True)
        if note:
            print(f"ptas conform: note: {redact(note)}", file=out, flush=True)
        try:
            with plugins_not_autoloaded():
                status = pytest.main(arguments, plugins=[ChosenTarget(chosen, slow), reporter])
            if profile_out:
                write_profile(chosen, token, profile_out, out)
        finally:
            if receiver is not None:
                receiver.close()
            if app is None:
                chosen.close()
    summary = reporter.summary()
    if report_dir:
        reporter.write_junit(os.path.join(report_dir, "junit.xml"))
        path = os.path.join(report_dir, "cucumber.json")
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
    passed, failed, skipped = reporter.totals()
    print(f"{passed} passed, {failed} failed, {skipped} skipped", file=out, flush=True)
    return 0 if failed == 0 and passed > 0 and status in (0, 5) and not reporter.errors else 1


class Reporter:
    """Progress while the suites run, then the summary per spec area (a pytest plugin object)."""

    def __init__(self, out, target, slow, tags_expression=None, only=None):
        self.out, self.target, self.slow, self.only = out, target, slow, set(only or ())
        self.wanted = selector(tags_expression)
        self.results = {}               # nodeid -> (area, title, outcome, detail)
        self.features = {}              # nodeid -> feature name (JUnit classname)
        self.durations = Counter()      # nodeid -> seconds
        self.deselected = []            # (area, reason, feature, title, for the target?)
        self.errors = []
        self.total = 0
        self.items = {}
        self.started = time.monotonic()

    def pytest_configure(self, config):
        # Only the crash line reaches the output: native tracebacks spare pytest's source parsing on every failure.
        config.option.tbstyle = "native"

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, config, items):
        if self.only:
            items[:] = [item for item in items if title(item) in self.only]

    def pytest_collection_finish(self, session):
        self.items = {item.nodeid: item for item in session.items}
        self.total = len(session.items)
        self.write(f"{self.total} scenarios selected")
        pace = self.target.pace
        if pace and self.total:
            requests = self.total * REQUESTS_PER_SCENARIO
            seconds = max(0.0, requests - pace[0]) * pace[1] / pace[0]
            self.write(f"estimate: about {minutes(seconds)} ({self.total} scenarios × ~{REQUESTS_PER_SCENARIO} "
                       f"requests, paced at {pace[0]} requests per {pace[1]:g} s; --pace for a higher limit)")

    def pytest_deselected(self, items):
        for item in items:
            reason = item.stash.get(tags.DESELECTED, None)
            if reason is not None and not self.wanted(item):
                reason = None          # --tags leaves it out anyway: not a scenario this target skipped
            self.deselected.append((tags.area_of(item), reason or "not selected by --tags", feature_of(item),
                                    title(item), reason is not None))

    def pytest_collectreport(self, report):
        if report.failed:
            self.errors.append(redact(report.longreprtext))
            self.write(f"collection error: {redact(report.longreprtext)[-2000:]}")

    @pytest.hookimpl(tryfirst=True)
    def pytest_bdd_step_error(self, request, feature, scenario, step, step_func, step_func_args, exception):
        request.node.stash[FAILED_STEP] = f"{step.keyword} {step.name}"
        if "scene" in request.fixturenames:
            request.node.stash[SCENE] = request.getfixturevalue("scene")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        """A failure reads as a QA engineer needs it, in the output and the reports alike: the step, what was
        expected in words, the last request and response; never a traceback."""
        outcome = yield
        report = outcome.get_result()
        if report.failed and call.excinfo is not None:
            report.longrepr = explain(item, call.excinfo)

    def pytest_runtest_logreport(self, report):
        item = self.items.get(report.nodeid)
        if item is None:
            return
        self.durations[report.nodeid] += report.duration
        known = self.results.get(report.nodeid)
        if report.failed:
            outcome, detail = "failed", str(report.longrepr)
        elif report.skipped:
            outcome, detail = "skipped", skip_reason(report)
        elif report.when == "call":
            outcome, detail = "passed", ""
        else:
            return
        if known and known[2] == "failed":
            return
        self.features[report.nodeid] = feature_of(item)
        self.results[report.nodeid] = (tags.area_of(item), title(item), outcome, redact(detail))
        if report.when != "teardown" or outcome == "failed":
            done = len(self.results)
            shown = detail if outcome == "skipped" else detail.replace("\n", "\n         ")
            self.write(f"[{done:>4}/{self.total}] {outcome.upper():7} {tags.area_of(item):14} {title(item)}"
                       + (f"\n         {shown}" if outcome != "passed" else ""))

    def write(self, line):
        print(redact(line), file=self.out, flush=True)

    def totals(self):
        """(passed, failed, skipped): a scenario the target could not run counts as skipped; one left out by
        --tags does not count at all."""
        counts = Counter(result[2] for result in self.results.values())
        not_run = sum(1 for entry in self.deselected if entry[4])
        return counts["passed"], counts["failed"] + len(self.errors), counts["skipped"] + not_run

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
            lines += [f"  {area}: {name}\n      " + detail.replace("\n", "\n      ")
                      for area, name, _, detail in failures]
        reasons = Counter((area, d) for area, _, outcome, d in self.results.values() if outcome == "skipped")
        reasons.update((area, reason) for area, reason, *_ in self.deselected)
        if reasons:
            lines.append("skipped or not run, with the reason:")
            lines += [f"  {area}: {count} — {reason}" for (area, reason), count in sorted(reasons.items())]
        return redact("\n".join(lines))

    def as_dict(self):
        return {"target": redact(self.target.describe()),
                "areas": {a: dict(c) for a, c in self.per_area().items()},
                "scenarios": [{"area": a, "scenario": n, "outcome": o, "detail": redact(d)}
                              for a, n, o, d in self.results.values()],
                "notRun": [{"area": a, "reason": r} for a, r, *_ in self.deselected]}

    def write_junit(self, path):
        """JUnit XML as CI dashboards group it: one testsuite per spec area, the feature as the classname; a
        scenario the target could not run is a skipped testcase with the reason."""
        cases = defaultdict(list)       # area -> (feature, title, outcome, detail, seconds)
        for nodeid, (area, name, outcome, detail) in self.results.items():
            cases[area].append((self.features.get(nodeid, ""), name, outcome, detail, self.durations[nodeid]))
        for area, reason, feature, name, for_target in self.deselected:
            if for_target:
                cases[area].append((feature, name, "skipped", reason, 0.0))
        root = ElementTree.Element("testsuites", name="ptas conform")
        for area in sorted(cases):
            rows = cases[area]
            counts = Counter(row[2] for row in rows)
            suite = ElementTree.SubElement(root, "testsuite", name=area, tests=str(len(rows)),
                                           failures=str(counts["failed"]), errors="0",
                                           skipped=str(counts["skipped"]),
                                           time=f"{sum(row[4] for row in rows):.3f}")
            for feature, name, outcome, detail, seconds in rows:
                case = ElementTree.SubElement(suite, "testcase", classname=feature or area, name=name,
                                              time=f"{seconds:.3f}")
                if outcome == "failed":
                    failure = ElementTree.SubElement(case, "failure", message=redact(detail.split("\n")[0])[:300])
                    failure.text = redact(detail)
                elif outcome == "skipped":
                    ElementTree.SubElement(case, "skipped", message=redact(detail)[:300])
        root.set("tests", str(sum(len(rows) for rows in cases.values())))
        ElementTree.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


FAILED_STEP = pytest.StashKey[str]()
SCENE = pytest.StashKey[object]()


@contextlib.contextmanager
def plugins_not_autoloaded():
    """PYTEST_DISABLE_PLUGIN_AUTOLOAD for the suites' own pytest run, as it was before afterwards."""
    before = os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
        else:
            os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = before


def selector(expression):
    """Whether --tags selects an item (pytest's own -m grammar), so target skips count only for selected ones."""
    if not expression:
        return lambda item: True
    from _pytest.mark.expression import Expression
    compiled = Expression.compile(expression.replace("@", ""))

    def wanted(item):
        return compiled.evaluate(lambda name, **kw: item.get_closest_marker(name) is not None)
    return wanted


def minutes(seconds):
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


def title(item):
    """The scenario's name as the feature says it, outline placeholders filled in."""
    name = (item.obj.__doc__ or item.name).split(": ", 1)[-1]
    example = getattr(item, "callspec", None) and item.callspec.params.get("_pytest_bdd_example")
    if example and "<" not in name:
        return f"{name} ({', '.join(str(v) for v in example.values())})"
    for key, value in (example or {}).items():
        name = name.replace(f"<{key}>", str(value))
    return name


def feature_of(item):
    """The feature's name (the JUnit classname): from pytest-bdd's registry, else the file the scenario is in."""
    try:
        from pytest_bdd.scenario import scenario_wrapper_template_registry
        return scenario_wrapper_template_registry[item.obj].feature.name
    except (ImportError, KeyError, AttributeError):
        return (item.obj.__doc__ or "").split(": ", 1)[0]


def explain(item, excinfo):
    """Step, expectation in words, last request and response, tokens masked; never a traceback."""
    step = item.stash.get(FAILED_STEP, None)
    error = excinfo.value
    lines = [f"at step “{step}”" if step else "while setting the stage (before the first step)"]
    lines.append("expected: " + expectation(error))
    scene = item.stash.get(SCENE, None)
    reply = None
    if scene is not None:
        replies = getattr(getattr(scene, "client", None), "replies", None) or []
        reply = replies[-1] if replies else getattr(scene, "reply", None)
    if reply is not None:
        lines.append(f"last request: {reply.method} {redact(reply.path)}"
                     + (f" ({reply.operation})" if reply.operation else ""))
        trace = trace_id(reply)
        lines.append(f"last response: {reply.status}" + (f", traceId {trace}" if trace else "")
                     + f", body: {excerpt(reply.text, 300) or '(empty)'}")
    return redact("\n".join(lines))


def expectation(error):
    """What the step expected, in words, from the exception it raised."""
    name = error.__class__.__name__
    text = str(error).replace("AssertionError: ", "").strip()
    if isinstance(error, AssertionError):
        first = text.split("\nassert ")[0].strip() if text else ""
        return redact(" / ".join(first.splitlines()[:4])[:600]) or "the step's check to hold (it did not)"
    if isinstance(error, KeyError):
        return f"the response to carry the field {text} (it is missing)"
    if isinstance(error, (IndexError, StopIteration)):
        return f"the response to list an entry the step needs (none there: {name} {text})".strip()
    if isinstance(error, (TypeError, AttributeError, ValueError)):
        return f"a response of the shape the step reads ({name}: {redact(text)[:300]})"
    return f"the step to complete ({name}: {redact(text)[:300]})"


def trace_id(reply):
    body = reply.body if isinstance(reply.body, dict) else {}
    for key in ("traceId", "traceid", "trace_id"):
        if isinstance(body.get(key), str):
            return body[key]
    for header in ("x-trace-id", "traceparent", "x-request-id", "request-id"):
        if reply.headers.get(header):
            return reply.headers[header]
    return None


def skip_reason(report):
    if isinstance(report.longrepr, tuple):
        return report.longrepr[2].replace("Skipped: ", "")
    return str(report.longrepr)
