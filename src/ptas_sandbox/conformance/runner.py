"""`ptas conform`: the suites run by pytest in this process against the chosen target, with progress, a
summary per spec area, the reports (report.py) and an exit status CI can gate on.

What a QA engineer running it against a staging environment expects: the target and the token are checked with
one request before anything runs (a refused token ends the run at once, exit 2, with a report that says so);
the scenarios that need time or data share one waiting budget; the last line counts what passed, failed, was
not checked and does not apply to the target, so it never reads as a pass of what was not checked.
"""

import contextlib
import importlib
import os
import sys
import tempfile
from dataclasses import dataclass, field

import pytest
import pytest_bdd.plugin as bdd_plugin

from ptas_sandbox.testing import plugin as testing_plugin

from . import FEATURES, harness, tags
from .harness import ChosenTarget
from .profile_learn import Recorder
from .profile_learn import write as write_profile
from .redact import redact
from .report import INTERRUPTED, Reporter
from .resolver import PATHLESS, parse_override
from .targets import TargetError, in_process, open_target
from .waiting import DEFAULT_MAX_WAIT, Budget

SUITE = '''"""The conformance suites: every feature, bound to the steps of the harness plugin."""
from pytest_bdd import scenarios

from ptas_sandbox.conformance import FEATURES

scenarios(FEATURES)
'''


def main(args):
    """Entry point of `ptas conform` (options parsed in cli/conform.py)."""
    return run(target=args.target, token=args.token, openapi=args.openapi, tags_expression=args.tags,
               report_dir=args.report_dir, quick=getattr(args, "quick", False), pace=getattr(args, "pace", None),
               as_deployment=getattr(args, "as_deployment", False), options=conform_options(args),
               operations=[*(getattr(args, "operation", None) or ()),
                           *read_operations(getattr(args, "operations", None))],
               profile_out=getattr(args, "profile_out", None))


def read_operations(path):
    """The lines of --operations FILE: `NAME=METHOD PATH` each (or the `--operation ...` lines a run printed),
    blank lines and `#` comments left out."""
    if not path:
        return []
    with open(path, encoding="utf-8") as handle:
        lines = [line.split("#", 1)[0].strip() for line in handle]
    return [line for line in lines if line]


def operations_said(operations):
    """What the run says of the §4.3 operations: those inferred from the document's paths, and those it could not
    find, as the --operation lines to fill in (each with the document's candidates, when there are several)."""
    missing = operations.unresolved()       # locates every one of them, so `inferred` is complete
    lines = [f"ptas conform: found {name} at {method} {path} (the only {method} of that shape in the target's "
             "document; --operation overrides it)" for name, (method, path) in sorted(operations.inferred.items())]
    if missing:
        lines.append(f"ptas conform: {len(missing)} operation(s) the spec names without a path are not in the target's "
                     "document under the spec's name; their scenarios are not checked. Fill in these lines (or put "
                     "them in a file for --operations FILE):")
        for name, candidates in missing:
            method = PATHLESS[name][0]
            among = f"    # one of: {', '.join(f'{m} {p}' for m, p in candidates)}" if candidates else ""
            lines.append(f"  --operation '{name}={method} /PATH'{among}")
    return lines


def conform_options(args):
    """The options the steps read (receiver, budgets): anything the target itself does not say."""
    return {name: getattr(args, name) for name in ("receiver_listen", "receiver_url", "max_wait", "oauth_consent")
            if getattr(args, name, None) is not None}


@dataclass
class Options:
    """What one run is asked: the target and how to reach it, what to select, where the reports go. `app` runs the
    suites against a WSGI app in this process instead of `target`: a simulator, or (hiding /_sandbox, with
    `token`) a deployment; the project's tests run deliberately broken targets this way, without pacing."""
    target: str = "sim"
    token: str | None = None
    openapi: str | None = None
    tags_expression: str | None = None
    report_dir: str | None = None
    quick: bool = False
    app: object = None
    out: object = None
    pace: str | None = None
    as_deployment: bool = False
    options: dict = field(default_factory=dict)
    clock: object = None
    only: object = None
    operations: list = field(default_factory=list)
    profile_out: str | None = None


class Refused(Exception):
    """The run cannot start (a bad option, an unreachable target, a refused token): exit 2."""


def run(**given):
    """Run the suites (Options' fields as keywords): 0 only when every selected scenario passed and none was
    kept from being checked by the target or its data; 1 otherwise; 2 when the run could not start (a report
    folder says so too: one failed test); 130 on Ctrl-C."""
    options = Options(**given)
    options.out = options.out or sys.stdout
    options.options = dict(options.options or {})
    reporter = Reporter(options.out, options.tags_expression, options.only)
    try:
        chosen, receiver, note = open_checked(options, reporter)
    except Refused as error:
        return refused(options, reporter, str(error))
    status = run_suites(options, chosen, receiver, note, reporter)
    return conclude(options, chosen, reporter, status)


def refused(options, reporter, message):
    print(f"ptas conform: {redact(message)}", file=options.out)
    reporter.preflight_failed(redact(message))
    if options.report_dir:
        reporter.write_reports(options.report_dir)
    print(reporter.last_line(), file=options.out, flush=True)
    return 2


def open_checked(options, reporter):
    """The first step: the tags known, the target opened and its access checked with one request, the budget and
    the receiver set up. Returns (target, receiver or None, a note on the access); raises Refused."""
    unknown = tags.unknown_in(options.tags_expression or "")
    if unknown:
        raise Refused(f"unknown tag(s) {', '.join(unknown)}; tags are {', '.join(tags.names())}")
    app, settings = options.app, options.options
    try:
        overrides = dict(parse_override(text) for text in options.operations or ())   # --operation NAME=METHOD PATH
        chosen = in_process(app, openapi=options.openapi, name="wsgi", token=options.token, overrides=overrides) \
            if app is not None else open_target(options.target, options.token, options.openapi, pace=options.pace,
                                                as_deployment=options.as_deployment, overrides=overrides)
    except (TargetError, ValueError) as error:
        raise Refused(str(error)) from None
    if options.clock is not None:
        chosen.use_clock(options.clock)
    reporter.target = chosen
    try:
        note = chosen.check_access()
    except TargetError as error:
        if app is None:
            chosen.close()
        raise Refused(str(error)) from None
    chosen.options = settings
    chosen.budget = Budget(settings.get("max_wait") or DEFAULT_MAX_WAIT)
    chosen.state.say = reporter.waiting_said
    receiver = None
    if settings.get("receiver_listen"):
        from .receiver import Receiver
        try:
            receiver = Receiver(settings["receiver_listen"], settings.get("receiver_url"))
        except (OSError, ValueError) as error:
            raise Refused(f"cannot listen on {settings['receiver_listen']}: {error}") from None
        if options.clock is not None:
            receiver.use_clock(options.clock)
        chosen.receiver = receiver
        print(f"ptas conform: webhook receiver listening on {settings['receiver_listen']}, given to the "
              f"target as {receiver.base}/…", file=options.out, flush=True)
    elif settings.get("receiver_url"):
        raise Refused("--receiver-url needs --receiver-listen (where the harness itself listens)")
    return chosen, receiver, note


def run_suites(options, chosen, receiver, note, reporter):
    """The second step: pytest runs the suites on the target, then what the run made is removed (a second
    Ctrl-C leaves the rest, counted). Returns pytest's exit status."""
    out, quick = options.out, options.quick
    with tempfile.TemporaryDirectory(prefix="ptas-conform-") as work:
        suite = os.path.join(work, "test_conformance_suite.py")
        with open(suite, "w", encoding="utf-8") as handle:
            handle.write(SUITE)
        # Only the plugins the suites need (pytest-bdd, the tag markers, the harness), given as modules: whatever
        # else is installed (schemathesis, playwright, ...) is not loaded, and no `-p NAME` makes pytest search
        # every installed package's entry points. pytest's unraisable-exception plugin is left out: it reports
        # nothing here and collects the garbage of the whole process twice at the end of every run.
        arguments = [suite, "-p", "no:terminal", "-p", "no:cacheprovider", "-p", "no:unraisableexception",
                     "-c", os.devnull, "--rootdir", work, "--confcutdir", work,
                     "--import-mode=importlib", "-o", "addopts=", "--strict-markers"]
        # The step modules as objects, ahead of the harness that names them: pytest looks a named plugin up among
        # every installed package's entry points first, a scan per name, and finds these already registered.
        steps = [importlib.import_module(name) for name in harness.pytest_plugins]
        plugins = [bdd_plugin, testing_plugin, *steps, harness, ChosenTarget(chosen, quick=quick), reporter]
        if options.tags_expression:
            arguments += ["-m", options.tags_expression.replace("@", "")]
        if options.report_dir:
            os.makedirs(options.report_dir, exist_ok=True)
            arguments += [f"--cucumberjson={os.path.join(options.report_dir, 'cucumber.json')}"]
        print(f"ptas conform: {chosen.describe()}; features in {FEATURES}", file=out, flush=True)
        if options.token and chosen.simulator:
            print("ptas conform: the target is a simulator (it answers /_sandbox/health): every scenario runs in "
                  "a fresh world its control API creates, so the token was only checked, not used; "
                  "--as-deployment runs what a deployment runs, with this token", file=out, flush=True)
        elif not chosen.simulator:
            print(f"ptas conform: {'--quick: no waiting' if quick else waiting_said(chosen.budget)}",
                  file=out, flush=True)
        if note:
            print(f"ptas conform: note: {redact(note)}", file=out, flush=True)
        if not chosen.simulator:
            said = operations_said(chosen.operations)
            if said:
                print("\n".join(said), file=out, flush=True)
        try:
            recorder = Recorder(chosen) if options.profile_out else None
            with plugins_not_autoloaded():
                status = pytest.main(arguments, plugins=plugins)
            if options.profile_out and not reporter.stopped:
                write_profile(chosen, options.token, options.profile_out, out, recorder)
        except KeyboardInterrupt:           # a second Ctrl-C, during pytest's own clean-up: the reports still follow
            reporter.stopped = reporter.stopped or INTERRUPTED
            chosen.held.abandoned = True
            status = pytest.ExitCode.INTERRUPTED
        finally:
            try:
                chosen.held.clean_up()
            except KeyboardInterrupt:       # Ctrl-C during the last clean-up: still an interrupted run (130)
                reporter.stopped = reporter.stopped or INTERRUPTED
                chosen.held.abandoned = True
            if receiver is not None:
                receiver.close()
            if options.app is None:
                chosen.close()
    return status


def conclude(options, chosen, reporter, status):
    """The last step: the reports, the summary, why the run stopped early if it did, the last line, and the
    exit status a CI gates on."""
    out = options.out
    if options.report_dir:
        reporter.write_reports(options.report_dir)
    print(reporter.summary(), file=out, flush=True)
    if status == pytest.ExitCode.NO_TESTS_COLLECTED:
        print("no scenario was selected (check --tags)", file=out)
    elif reporter.stopped:
        print(f"the run stopped early: {reporter.stopped}", file=out)
    elif status not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        print(f"pytest stopped early: {pytest.ExitCode(status).name}", file=out)
    if not chosen.simulator and chosen.operations.unresolved():
        print("\n".join(line for line in operations_said(chosen.operations) if "found " not in line), file=out)
    print(reporter.last_line(), file=out, flush=True)
    passed, failed = reporter.totals()[:2]
    if reporter.stopped == INTERRUPTED:
        return 130
    passing = failed == 0 and passed > 0 and status in (0, 5) and not reporter.errors
    return 0 if passing and not reporter.gating_failed() else 1


def waiting_said(budget):
    return (f"scenarios that need time or data wait up to {budget.total:g} s in all (--max-wait), reusing "
            "accounts that already hold data; --quick leaves them out")


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
