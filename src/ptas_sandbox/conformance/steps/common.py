"""Steps every area shares: the partner, outcomes of a request, ProblemDetails, time passing, date-times."""

from datetime import datetime, timedelta, timezone

from pytest_bdd import given, then, when

from .. import checks
from ..datetimes import parse
from ..scene import check
from . import phrase


@given("a partner")
def a_partner(scene):
    """The stage itself: a fresh world's root partner on a simulator, the given partner token elsewhere."""
    return scene


@then("the request succeeds")
def request_succeeds(scene):
    check(scene.reply.ok, f"expected success, got {scene.reply.describe()}")


@then("the request is refused")
def request_refused(scene):
    check(400 <= scene.reply.status < 500, f"expected a refusal (4xx), got {scene.reply.describe()}")


@then("the request is refused as unauthorized")
def refused_unauthorized(scene):
    checks.problem(scene.reply, 401)


@then("the request is refused as forbidden")
def refused_forbidden(scene):
    checks.problem(scene.reply, 403)


@then("the request is refused as forbidden or not found")
def refused_forbidden_or_not_found(scene):
    check(scene.reply.status in (403, 404), f"expected 403 or 404, got {scene.reply.describe()}")


@then(phrase("the answer is a problem with status {status:d}"))
def answer_is_problem(scene, status):
    checks.problem(scene.reply, status)


@then(phrase('the problem type ends with "{slug}"'))
def problem_type(scene, slug):
    kind = (scene.reply.body or {}).get("type", "")
    check(kind.endswith(slug), f"expected a problem type ending with {slug!r}, got {kind!r}")


@then(phrase("the response status is {status:d}"))
def response_status(scene, status):
    check(scene.reply.status == status, f"expected {status}, got {scene.reply.describe()}")


@when(phrase("{seconds:d} seconds pass"))
def seconds_pass(scene, seconds):
    scene.time_passes(seconds)


@given("the clock stands still at a whole minute", target_fixture="frozen_at")
def clock_at_whole_minute(scene):
    """Freeze the world clock on the next whole minute, so a timestamp made now has a zero fraction."""
    reply = scene.must(scene.client.call("SandboxGetClock", token=scene.token), "read the world clock")
    now = reply.body["now"]
    minute = now[:16] + ":00.0000000Z"
    moment = datetime.fromtimestamp(parse(minute) / 1_000_000, timezone.utc) + timedelta(minutes=1)
    target = moment.strftime("%Y-%m-%dT%H:%M:%S.0000000Z")
    scene.must(scene.client.call("SandboxSetClock", token=scene.token, json={"set": target, "freeze": True}),
               "set and freeze the clock")
    return target


@then("every date-time in every response has seven fractional digits")
def seven_digits_everywhere(scene):
    """Spec §2 and §9.3: every date-time of every response, at any depth, zero fractions included."""
    bad = []
    for reply in scene.client.replies:
        if (reply.operation or "").startswith("Sandbox"):
            continue        # the control API is the harness's own tooling, not a response of the service
        bad += [f"{reply.operation or reply.path}: {where} = {value!r}"
                for where, value in checks.bad_date_times(reply.body)]
    check(not bad, "date-times without seven fractional digits and a Z:\n  " + "\n  ".join(bad[:20]))


@then("the new token was created at the whole minute with seven zero digits")
def created_on_the_minute(scene, frozen_at):
    created = (scene.reply.body or {}).get("createdAt")
    check(created == frozen_at, f"createdAt: expected {frozen_at!r}, got {created!r}")
