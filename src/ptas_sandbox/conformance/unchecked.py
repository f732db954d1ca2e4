"""Why a scenario was not checked, in the two kinds a CI job gates on differently.

- BY_TARGET: the target or its data do not allow the check (the data the spec promises never came within the
  budget, an answer leaves nothing to inspect, a field the step needs is missing). A faithful target has none:
  it counts in the gating total (`totals.notCheckedByTarget`) and makes the run's exit status 1.
- BY_RUN: this run's budget or options left it out (`--quick`, no `--receiver-listen`, a wait longer than
  `--max-wait`, an operation to name with `--operation`, an interrupted run). Counted apart
  (`totals.leftOutByRun`); another run with other options checks it.

A step says which with `target_does_not_allow(reason)` or `left_out_by_run(reason)`; a plain `pytest.skip` is
classified by its words (REMEDIES): a reason an option of the run can change is BY_RUN, any other BY_TARGET.
A third, `not_applicable(reason)`, is no unchecked scenario at all: the target chose otherwise where the spec is
silent (a minimum it may set, a field it may require), so the check does not apply to it; it counts with the
scenarios not applicable to the target (`totals.notApplicable`), like a @sandbox scenario on a deployment.
"""

import pytest

BY_TARGET, BY_RUN = "target", "run"


class TargetDoesNotAllow(pytest.skip.Exception):
    """Not checked because the target or its data do not allow it: the gating kind."""


class LeftOutByRun(pytest.skip.Exception):
    """Not checked because this run's budget or options left it out."""


class NotApplicable(pytest.skip.Exception):
    """The check does not apply: the target made a choice the spec leaves open that the check cannot meet."""


def not_applicable(reason):
    raise NotApplicable(reason)


def target_does_not_allow(reason):
    raise TargetDoesNotAllow(reason)


def left_out_by_run(reason):
    raise LeftOutByRun(reason)


# What would check a scenario that was not checked, by words of its reason (the first that matches).
REMEDIES = (
    ("check with: ", None),                       # the reason says it itself
    ("--oauth-consent", "--oauth-consent COMMAND (or interactive)"),
    ("not offered by the target", "--operation NAME=METHOD PATH (see the lines printed above), --operations FILE "
                                  "or --openapi FILE with the operation and its request schema"),
    ("receiver", "--receiver-listen HOST:PORT [--receiver-url URL]"),
    ("--quick", "a run without --quick"),
    ("not selected by --tags", "--tags"),
    ("not run: the run was interrupted", "a run that is not interrupted"),
    ("not run: the target answered 429", "a target whose rate-limit window moves, or a lower --pace"),
    ("only a simulator can move time", "a simulator target (or the scenario marked @slow)"),
)
NOTHING_TO_CHANGE = "nothing the run can change: the target's data or document does not allow it"


def remedy(reason):
    """What would check a scenario left unchecked for `reason`, in words a QA engineer can act on."""
    for words, option in REMEDIES:
        if words in reason:
            return option or reason.split("check with: ", 1)[1].rstrip(")")
    return NOTHING_TO_CHANGE


def cause(reason, exception=None):
    """BY_TARGET or BY_RUN: the exception a step raised says it; else the reason's words do."""
    if isinstance(exception, TargetDoesNotAllow):
        return BY_TARGET
    if isinstance(exception, LeftOutByRun):
        return BY_RUN
    return BY_TARGET if remedy(reason) == NOTHING_TO_CHANGE else BY_RUN
