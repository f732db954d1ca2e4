"""The reporting half of `ptas conform`: progress lines while the suites run, the summary per spec area, JUnit
XML and the summary files, and a failure said as a QA engineer needs it (step, expectation, last exchange)."""

import json
import os
import time
from collections import Counter, defaultdict
from xml.etree import ElementTree

import pytest

from . import tags
from .client import RateLimitStuck
from .redact import excerpt, redact, redact_file
from .unchecked import BY_RUN, BY_TARGET, NotApplicable, cause, remedy

# Requests a scenario sends on average, for the duration estimate only: a default deployment run of the @contract
# suites against the simulator sent 785 requests for 276 scenarios (clean-up, shared records and the §8 burst's
# 101 included).
REQUESTS_PER_SCENARIO = 3


PASSED, FAILED, NOT_CHECKED, NOT_APPLICABLE = "passed", "failed", "not checked", "not applicable"
INTERRUPTED = "the run was interrupted (Ctrl-C)"
CAUSE = pytest.StashKey[str]()
STEPS_STARTED = pytest.StashKey[int]()     # steps of the scenario begun so far (Background ones included)
class Reporter:
    """Progress while the suites run, then the summary per spec area (a pytest plugin object)."""

    def __init__(self, out, tags_expression=None, only=None):
        self.out, self.only, self.target = out, set(only or ()), None
        self.wanted = selector(tags_expression)
        self.results = {}               # nodeid -> (area, title, outcome, detail)
        self.causes = {}                # nodeid -> unchecked.BY_TARGET | BY_RUN, of a scenario not checked
        self.features = {}              # nodeid -> feature name (JUnit classname)
        self.durations = Counter()      # nodeid -> seconds
        self.left_out = []              # (area, outcome, reason, feature, title): not run on this target
        self.deselected = {}            # nodeid -> (item, reason) of a scenario left out and not checked
        self.errors = []
        self.total = 0
        self.items = {}
        self.started = time.monotonic()
        self.stopped = None             # why the run stopped before its last scenario (Ctrl-C, a stuck 429)

    def pytest_configure(self, config):
        # Only the crash line reaches the output: native tracebacks spare pytest's source parsing on every failure.
        config.option.tbstyle = "native"

    @pytest.hookimpl(tryfirst=True)
    def pytest_pycollect_makeitem(self, collector, name, obj):
        """With `only`, a scenario not among them becomes no item at all (each item costs its fixture closure to
        make); an outline's titles need its examples, so its items are made and chosen below."""
        if self.only and not outline(obj) and scenario_name(obj, name) not in self.only:
            return []
        return None

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
            requests = self.estimated_requests()
            seconds = max(0.0, requests - pace[0]) * pace[1] / pace[0]
            self.write(f"estimate: about {requests} requests ({self.total} scenarios × ~{REQUESTS_PER_SCENARIO}) "
                       f"at {pace[0]} per {pace[1]:g} s: about {minutes(seconds)} of paced requests (--pace for a "
                       f"higher limit), plus up to {minutes(self.target.budget.total)} of waiting for time and data "
                       "(--max-wait); the progress lines count the requests sent")

    def estimated_requests(self):
        return self.total * REQUESTS_PER_SCENARIO

    def counted(self):
        """`, N of ~M requests` on a paced run (what its duration depends on), else nothing."""
        if self.target is None or not getattr(self.target, "pace", None):
            return ""
        sent = getattr(getattr(self.target, "state", None), "sent", 0)
        return f", {sent} of ~{max(sent, self.estimated_requests())} requests"

    def pytest_deselected(self, items):
        for item in items:
            kind, reason = item.stash.get(tags.DESELECTED, (None, None))
            if reason is None or not self.wanted(item):
                continue        # --tags leaves it out anyway: not a scenario this target could not run
            self.left_out.append((tags.area_of(item), kind, reason, feature_of(item), title(item)))
            if kind == NOT_CHECKED:
                self.deselected[item.nodeid] = (item, reason)

    def pytest_collectreport(self, report):
        if report.failed:
            self.errors.append(redact(report.longreprtext))
            self.write(f"collection error: {redact(report.longreprtext)[-2000:]}")

    def pytest_bdd_before_step(self, request, feature, scenario, step, step_func):
        request.node.stash[STEPS_STARTED] = request.node.stash.get(STEPS_STARTED, 0) + 1

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
        if report.skipped:
            error = call.excinfo.value if call.excinfo is not None else None
            reason = skip_reason(report)
            item.stash[CAUSE] = NOT_APPLICABLE if isinstance(error, NotApplicable) else cause(reason, error)
        if report.failed and call.excinfo is not None:
            report.longrepr = explain(item, call.excinfo)
            if isinstance(call.excinfo.value, RateLimitStuck):
                self.stopped = str(call.excinfo.value)
                item.session.shouldstop = self.stopped

    def pytest_keyboard_interrupt(self, excinfo):
        """Ctrl-C: say what happens now, stop waiting (no pace, no Retry-After), and report what ran. (pytest
        calls this too when a stuck 429 made the run stop: that reason is kept.)"""
        if self.stopped:
            return
        self.stopped = INTERRUPTED
        if self.target is not None:
            self.target.state.stopping = True
        self.write("interrupted (Ctrl-C): removing what the run made on the target (tokens, users, child partners, "
                   "webhooks, settings), without waiting; Ctrl-C again leaves it; the reports follow")

    def waiting_said(self, seconds, why):
        """A paced run is never silent for long: the wait, why, and the scenarios done so far."""
        done = len(self.results)
        elapsed = time.monotonic() - self.started
        left = f", about {minutes(elapsed / done * (self.total - done))} left at the rate so far" \
            if done and self.total > done else ""
        self.write(f"         … waiting {seconds:.0f} s for {why}; {done}/{self.total} scenarios done"
                   f"{self.counted()}{left}")

    def pytest_runtest_logreport(self, report):
        item = self.items.get(report.nodeid)
        if item is None:
            return
        self.durations[report.nodeid] += report.duration
        known = self.results.get(report.nodeid)
        if report.failed:
            outcome, detail = FAILED, str(report.longrepr)
        elif report.skipped:
            outcome, detail = NOT_CHECKED, skip_reason(report)
            if item.stash.get(CAUSE, None) == NOT_APPLICABLE:
                outcome = NOT_APPLICABLE
        elif report.when == "call":
            outcome, detail = PASSED, ""
        else:
            return
        if known and known[2] == FAILED:
            return
        self.features[report.nodeid] = feature_of(item)
        self.results[report.nodeid] = (tags.area_of(item), title(item), outcome, redact(detail))
        if outcome == NOT_CHECKED:
            self.causes[report.nodeid] = item.stash.get(CAUSE, None) or cause(detail)
        if report.when != "teardown" or outcome == FAILED:
            done = len(self.results)
            shown = detail if outcome in (NOT_CHECKED, NOT_APPLICABLE) else detail.replace("\n", "\n         ")
            word = "SKIPPED" if outcome in (NOT_CHECKED, NOT_APPLICABLE) else outcome.upper()
            self.write(f"[{done:>4}/{self.total}{self.counted()}] {word:7} {tags.area_of(item):14} {title(item)}"
                       + (f"\n         {shown}" if outcome != PASSED else ""))

    def write(self, line):
        print(redact(line), file=self.out, flush=True)

    def preflight_failed(self, message):
        """The run could not start: one failed test says why, so a CI publisher finds a report."""
        self.results["preflight"] = ("preflight", "the target and the token can be used", FAILED, message)
        self.features["preflight"] = "ptas conform preflight"

    # -- what the run found ---------------------------------------------------------------------------------
    def outcomes(self):
        """(area, title, outcome, detail, feature, seconds, cause) of every scenario the target could have run or
        did; `cause` (unchecked.BY_TARGET or BY_RUN) only for one not checked."""
        rows = [(a, n, o, d, self.features.get(node, ""), self.durations[node], self.causes.get(node))
                for node, (a, n, o, d) in self.results.items()]
        rows += [(area, name, kind, reason, feature, 0.0, cause(reason) if kind == NOT_CHECKED else None)
                 for area, kind, reason, feature, name in self.left_out]
        not_run = f"not run: {self.stopped}" if self.stopped else "not run"
        rows += [(tags.area_of(item), title(item), NOT_CHECKED, not_run, feature_of(item), 0.0, BY_RUN)
                 for node, item in self.items.items() if node not in self.results]
        return rows

    def totals(self):
        """(passed, failed, not checked, not applicable); a scenario --tags left out does not count at all."""
        counts = Counter(row[2] for row in self.outcomes())
        return counts[PASSED], counts[FAILED] + len(self.errors), counts[NOT_CHECKED], counts[NOT_APPLICABLE]

    def unchecked_by(self):
        """Scenarios not checked, by cause: {BY_TARGET: n, BY_RUN: n} (the first is the gating one)."""
        counts = Counter(row[6] for row in self.outcomes() if row[2] == NOT_CHECKED)
        return {BY_TARGET: counts[BY_TARGET], BY_RUN: counts[BY_RUN]}

    def unchecked_areas(self):
        return sorted({row[0] for row in self.outcomes() if row[2] == NOT_CHECKED})

    def last_line(self):
        """Counts that never read as a pass of what was not checked: what the target kept from being checked
        apart from what this run left out, and the unchecked areas named."""
        passed, failed, unchecked, inapplicable = self.totals()
        line = f"{passed} passed, {failed} failed, {unchecked} not checked"
        if unchecked:
            by = self.unchecked_by()
            line += (f" ({by[BY_TARGET]} because of the target or its data"
                     + (", which fails the run" if by[BY_TARGET] else "")
                     + f"; {by[BY_RUN]} left out by this run's budget or options)")
        if inapplicable:
            line += f", {inapplicable} not applicable to this target"
        if unchecked:
            line += f" (NOT CHECKED in {', '.join(self.unchecked_areas())}: see above)"
        return line

    def gating_failed(self):
        """Whether the run must not pass a gate although nothing failed: the target or its data kept scenarios
        from being checked."""
        return self.unchecked_by()[BY_TARGET] > 0

    def per_area(self):
        areas = defaultdict(Counter)
        for area, _, outcome, *_ in self.outcomes():
            areas[area][outcome] += 1
        return areas

    def not_checked(self, by=None):
        """(area, reason, what would check it) -> count, of the scenarios not checked (for cause `by`)."""
        return Counter((row[0], row[3], remedy(row[3])) for row in self.outcomes()
                       if row[2] == NOT_CHECKED and by in (None, row[6]))

    def summary(self):
        elapsed = time.monotonic() - self.started
        described = self.target.describe() if self.target is not None else "no target"
        lines = ["", f"summary by spec area ({described}, {elapsed:.1f} s):",
                 f"  {'area':14} {'spec':42} {'passed':>6} {'failed':>6} {'not checked':>11} {'n/a':>4}"]
        for area, counts in sorted(self.per_area().items()):
            lines.append(f"  {area:14} {tags.AREAS.get(area, ''):42} {counts[PASSED]:>6} {counts[FAILED]:>6} "
                         f"{counts[NOT_CHECKED]:>11} {counts[NOT_APPLICABLE]:>4}")
        failures = [row for row in self.outcomes() if row[2] == FAILED]
        if failures:
            lines.append("failed:")
            lines += [f"  {area}: {name}\n      " + detail.replace("\n", "\n      ")
                      for area, name, _, detail, *_ in failures]
        inapplicable = Counter((row[0], row[3]) for row in self.outcomes() if row[2] == NOT_APPLICABLE)
        if inapplicable:
            lines.append("not applicable to this target:")
            lines += [f"  {area}: {count} — {reason}" for (area, reason), count in sorted(inapplicable.items())]
        left = self.target.held.left if self.target is not None else {}
        if left:
            lines.append("left on the target by the run:")
            lines += [f"  {count} {what}" for what, count in sorted(left.items())]
        for by, heading in ((BY_TARGET, "NOT CHECKED because of the target or its data (a gate counts these), by "
                                        "area and spec section:"),
                            (BY_RUN, "NOT CHECKED, left out by this run's budget or options, by area and spec "
                                     "section, with what would check it:")):
            unchecked = self.not_checked(by)
            # what a stopped run did not reach is one line, not one per area
            not_run = {key: count for key, count in unchecked.items() if key[1].startswith("not run")}
            if unchecked:
                lines.append(heading)
                lines += [f"  {area} ({tags.AREAS.get(area, '')}): {count} — {reason}\n      check with: {option}"
                          for (area, reason, option), count in sorted(unchecked.items()) if (area, reason, option)
                          not in not_run]
            for (reason, option), keys in group_by_reason(not_run).items():
                lines.append(f"  {sum(not_run[key] for key in keys)} scenarios in {', '.join(k[0] for k in keys)} "
                             f"— {reason}\n      check with: {option}")
        return redact("\n".join(lines))

    def as_dict(self):
        passed, failed, unchecked, inapplicable = self.totals()
        return {"target": redact(self.target.describe()) if self.target is not None else None,
                "totals": {"passed": passed, "failed": failed, "notChecked": unchecked,
                           "notCheckedByTarget": self.unchecked_by()[BY_TARGET],
                           "leftOutByRun": self.unchecked_by()[BY_RUN], "notApplicable": inapplicable},
                "lastLine": self.last_line(),
                "areas": {a: dict(c) for a, c in self.per_area().items()},
                "scenarios": [{"area": row[0], "scenario": row[1], "outcome": row[2], "detail": redact(row[3]),
                               **({"cause": row[6]} if row[2] == NOT_CHECKED else {})}
                              for row in self.outcomes()],
                "leftOnTarget": dict(self.target.held.left) if self.target is not None else {},
                "notChecked": [{"area": a, "spec": tags.AREAS.get(a, ""), "reason": r, "checkWith": option,
                                "cause": by, "scenarios": count}
                               for by in (BY_TARGET, BY_RUN)
                               for (a, r, option), count in sorted(self.not_checked(by).items())]}

    def write_reports(self, report_dir):
        """junit.xml, summary.txt (ending with the last line), summary.json; cucumber.json's tokens masked."""
        os.makedirs(report_dir, exist_ok=True)
        self.write_junit(os.path.join(report_dir, "junit.xml"))
        path = os.path.join(report_dir, "cucumber.json")
        if os.path.exists(path):
            self.mark_skipped_in_cucumber(path)
            redact_file(path)
        with open(os.path.join(report_dir, "summary.txt"), "w", encoding="utf-8") as handle:
            handle.write(self.summary() + "\n" + self.last_line() + "\n")
        with open(os.path.join(report_dir, "summary.json"), "w", encoding="utf-8") as handle:
            json.dump(self.as_dict(), handle, indent=2)

    def mark_skipped_in_cucumber(self, path):
        """pytest-bdd writes a scenario that skipped as passed steps (a skip is no step error), and one that
        skipped before its first step or never ran not at all: in a Cucumber viewer both looked green or absent.
        Here the step that skipped and those after it are `skipped`, and a scenario missing gets one skipped
        step that says why."""
        with open(path, encoding="utf-8") as handle:
            features = json.load(handle)
        elements = {element["id"]: element for feature in features for element in feature.get("elements", ())}
        by_name = {feature.get("name"): feature for feature in features}
        unchecked = [(item, self.results[node][3] if node in self.results else
                      f"not run: {self.stopped}" if self.stopped else "not run")
                     for node, item in self.items.items()
                     if node not in self.results or self.results[node][2] in (NOT_CHECKED, NOT_APPLICABLE)]
        for item, reason in [*unchecked, *self.deselected.values()]:
            steps = [{"keyword": step.keyword, "name": step.name, "line": step.line_number,
                      "match": {"location": ""}, "result": {"status": "skipped"}} for step in scenario_steps(item)]
            element = elements.get(item.name)
            if element is not None:
                started = item.stash.get(STEPS_STARTED, 0)
                for step in element["steps"][max(started - 1, 0):]:
                    step["result"] = {"status": "skipped"}
                element["steps"] += steps[len(element["steps"]):]      # pytest-bdd lists only the steps reached
                continue
            name = feature_of(item)
            feature = by_name.get(name)
            if feature is None:
                feature = by_name[name] = {"keyword": "Feature", "uri": name, "name": name,
                                           "id": name.lower().replace(" ", "-"), "line": 1, "description": "",
                                           "tags": [], "elements": []}
                features.append(feature)
            feature["elements"].append({
                "keyword": "Scenario", "id": item.name, "name": title(item), "line": 1, "description": "",
                "tags": [{"name": marker.name, "line": 1} for marker in item.iter_markers()
                         if marker.name in tags.KINDS or marker.name in tags.AREAS],
                "type": "scenario",
                "steps": steps or [{"keyword": "Then", "name": f"not checked: {reason}", "line": 1,
                                    "match": {"location": ""}, "result": {"status": "skipped"}}]})
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(features, handle, indent=4)

    def write_junit(self, path):
        """JUnit XML as CI dashboards group it: one testsuite per spec area, the feature as the classname; a
        scenario not checked is a skipped testcase with the reason and what would check it; one that does not
        apply to the target is no testcase at all, only counted in the suite's properties."""
        cases = defaultdict(list)       # area -> (feature, title, outcome, detail, seconds)
        inapplicable = defaultdict(Counter)
        for area, name, outcome, detail, feature, seconds, _ in self.outcomes():
            if outcome == NOT_APPLICABLE:
                inapplicable[area][detail] += 1
            else:
                cases[area].append((feature, name, outcome, detail, seconds))
        root = ElementTree.Element("testsuites", name="ptas conform")
        for area in sorted(set(cases) | set(inapplicable)):
            rows = cases[area]
            counts = Counter(row[2] for row in rows)
            suite = ElementTree.SubElement(root, "testsuite", name=area, tests=str(len(rows)),
                                           failures=str(counts[FAILED]), errors="0",
                                           skipped=str(counts[NOT_CHECKED]),
                                           time=f"{sum(row[4] for row in rows):.3f}")
            if inapplicable[area]:
                properties = ElementTree.SubElement(suite, "properties")
                for reason, count in sorted(inapplicable[area].items()):
                    ElementTree.SubElement(properties, "property", name=f"not applicable: {reason}",
                                           value=str(count))
            seen = Counter()
            for feature, name, outcome, detail, seconds in rows:
                seen[(feature, name)] += 1
                unique = name if seen[(feature, name)] == 1 else f"{name} #{seen[(feature, name)]}"
                case = ElementTree.SubElement(suite, "testcase", classname=feature or area, name=unique,
                                              time=f"{seconds:.3f}")
                if outcome == FAILED:
                    failure = ElementTree.SubElement(case, "failure", message=failure_message(detail))
                    failure.text = redact(detail)
                elif outcome == NOT_CHECKED:
                    said = "" if "check with: " in detail else f" (check with: {remedy(detail)})"
                    ElementTree.SubElement(case, "skipped", message=redact(f"not checked: {detail}{said}")[:500])
        root.set("tests", str(sum(len(rows) for rows in cases.values())))
        ElementTree.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def group_by_reason(counts):
    """{(reason, option): [(area, reason, option), ...]} of (area, reason, option) keys, areas in order."""
    grouped = defaultdict(list)
    for key in sorted(counts):
        grouped[key[1:]].append(key)
    return grouped


def failure_message(detail):
    """The expectation in words (a JUnit failure's message), not the step it failed at."""
    lines = detail.split("\n")
    said = next((line[len("expected: "):] for line in lines if line.startswith("expected: ")), lines[0])
    return redact(said)[:300]


FAILED_STEP = pytest.StashKey[str]()
SCENE = pytest.StashKey[object]()


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
    name = scenario_name(item.obj, item.name)
    example = example_of(item)
    if example and "<" not in name:
        return f"{name} ({', '.join(str(v) for v in example.values())})"
    for key, value in (example or {}).items():
        name = name.replace(f"<{key}>", str(value))
    return name


def scenario_name(function, name):
    """The scenario's name as the feature says it (pytest-bdd's docstring, `Feature: Scenario`), placeholders and
    all; `name`, the test function's, where there is no docstring."""
    return (function.__doc__ or name).split(": ", 1)[-1]


def example_of(item):
    """The outline example an item runs (pytest-bdd's parameter), or None."""
    return getattr(item, "callspec", None) and item.callspec.params.get("_pytest_bdd_example")


def template_of(function):
    """The scenario template pytest-bdd registered for a test function, or None (not a scenario's)."""
    try:
        from pytest_bdd.scenario import scenario_wrapper_template_registry
        return scenario_wrapper_template_registry.get(function)
    except (ImportError, TypeError):            # TypeError: an object the registry's weak keys cannot hold
        return None


def feature_of(item):
    """The feature's name (the JUnit classname): from pytest-bdd's registry, else the file the scenario is in."""
    template = template_of(item.obj)
    return template.feature.name if template is not None else (item.obj.__doc__ or "").split(": ", 1)[0]


def outline(function):
    """Whether `function` is an outline's scenario, or no scenario's at all (pytest-bdd's registry): True keeps it."""
    template = template_of(function)
    return template is None or template.templated


def scenario_steps(item):
    """The scenario's steps (its Background's first, outline placeholders filled in), from pytest-bdd's registry."""
    template = template_of(item.obj)
    return template.render(example_of(item) or {}).steps if template is not None else []


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
    if isinstance(error, RateLimitStuck):
        return redact(text)
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
