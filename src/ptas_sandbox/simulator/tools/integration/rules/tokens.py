"""Tokens: where they are sent, which are used, how long they live, how many are made and what they may do."""

from ....timestamps import SECOND_US, render
from .base import Rule, finding, grouped, judges, listing, observation_evidence
from .history import TOKEN_MAKERS, delivered_seq, live_at

UNUSED_RESOURCES = 3            # scope families a token holds and never uses before it is "every scope"
TOKENS_PER_SUBJECT = 3          # tokens made for one subject while an earlier one was still valid
# A user token may be handed to the end user (spec §5 rule 6): one valid for longer than this, and for over
# LIFETIME_SHARE times the world time the client used it, is a bearer secret that outlives its purpose.
LONG_USER_TOKEN_SECONDS = 30 * 86400
LIFETIME_SHARE = 10
SHORT_USE = 2                   # requests a token made "per request" serves before the next one is made
# A token's last stretch, in which a new one for the same subject is a renewal (spec §1 capability 2: a new token
# "when the previous one is expired or about to expire"): a quarter of its life, or 15 minutes if that is more,
# but never more than half of it (so tokens made seconds apart are never renewals, however short they live).
RENEWAL_SHARE = 4
RENEWAL_SECONDS = 15 * 60


@judges(
    Rule("credentials-misplaced", "error", "Tokens sent in the wrong place or with the wrong scheme",
         "Send a token only as `Authorization: Bearer <token>` (spec §5 rule 1): never in the query string "
         "(it lands in logs) or another header."),
)
def credentials_misplaced(data):
    by_where = grouped([c for c in data.api_calls if c.entry["marks"].get("credentials")],
                       lambda c: c.entry["marks"]["credentials"])
    for where, calls in by_where.items():
        answered = ("answered them anyway, and the token is now in every log the URL reached" if "beside" in where
                    else "answered 401")
        yield finding("credentials-misplaced", f"{len(calls)} call(s) carried a token in {where}; the service "
                      f"reads only `Authorization: Bearer <token>` and {answered}.", [c.evidence() for c in calls],
                      where=where)


def is_long_lived(token, initial):
    """A partner token with partner:update outliving the initial one: what the client should use in its place."""
    scope = token["scope"].split()
    return token["id"] != initial["id"] and token["kind"] == "partner" and token["partner_id"] == initial[
        "partner_id"] and token["expires_in"] > initial["expires_in"] and (
        "partner:update" in scope or "partner:all" in scope)


def is_successor(data, token, initial):
    """A long-lived token the client made (or uses) in place of the initial one: its answer reached the client."""
    return is_long_lived(token, initial) and delivered_seq(data, token) is not None


@judges(
    Rule("initial-token-in-use", "warning", "The initial partner token is still used for API calls",
         "Create a long-lived partner token with partner:update (POST /partners/self/tokens), store it securely "
         "and use it instead (spec §5 rule 2)."),
    Rule("initial-token-not-revoked", "warning", "The initial partner token was never revoked",
         "Revoke the initial token with the long-lived one (DELETE /partners/self/tokens/{id}), as spec §5 advises."),
)
def initial_token(data):
    initial = data.initial_token
    if initial is None:
        return
    successors = [t for t in data.tokens.values() if is_successor(data, t, initial)]
    uses = [c for c in data.api_calls if c.token_id == initial["id"]]
    late = [c for c in uses if any(live_at(data, t, c) for t in successors)]
    if late:
        yield finding("initial-token-in-use", f"The initial partner token made {len(late)} call(s) while a "
                      "long-lived token the client held was valid.", [c.evidence() for c in late])
    if successors and initial["revoked_at"] is None:
        since = min(delivered_seq(data, t) for t in successors)
        yield finding("initial-token-not-revoked", "A long-lived partner token exists, and the initial token "
                      f"(id {initial['id']}) is still valid until {render(initial['expires_at'])}.",
                      [{"at": render(initial["created_at"]), "tokenId": initial["id"], "requestId": since}])
    if uses and not successors:
        lost = [t for t in data.tokens.values() if is_long_lived(t, initial)]
        why = (f"a long-lived token was made (id {lost[0]['id']}) but its answer never reached the client (a 5xx "
               "or a dropped connection) and it was never used: list the tokens (GET /partners/self/tokens) to "
               "find it, or revoke it and make another" if lost else "no long-lived token was created")
        yield finding("initial-token-in-use", f"All {len(uses)} API call(s) of the root partner use the initial "
                      f"token, which expires after {initial['expires_in'] // 86400} day(s); {why}.",
                      [c.evidence() for c in uses])


@judges(
    Rule("partner-token-exposed", "error", "A partner token was handed to an end-user page",
         "Partner tokens must not be shared with users (spec §5 rule 2): open Account UI and User UI sessions "
         "server-side and send the person only the session's url; give a browser a user token at most."),
)
def partner_token_exposed(data):
    rows = data.observations.get("partner-token-exposed", [])
    if rows:
        yield finding("partner-token-exposed", f"A partner token reached an end-user page or URL {len(rows)} "
                      f"time(s): {rows[0]['detail']}", [observation_evidence(r) for r in rows])


# Tokens judged after their expiry, by kind: the rule, and the subject a new token renews them for.
EXPIRED = {"user": ("expired-user-token", "user_id"), "partner": ("expired-partner-token", "partner_id")}


@judges(
    Rule("expired-user-token", "warning", "User tokens used after they expired",
         "Renew a user token with CreateUserToken (POST /users/{id}/tokens) before its expiresAt, or at the first "
         "401, and stop using the old one."),
    Rule("expired-partner-token", "warning", "Partner tokens used after they expired",
         "Renew a partner token with CreateOwnPartnerToken (POST /partners/self/tokens) before its expiresAt, or "
         "at the first 401, and stop using the old one; a job that runs for hours needs a token that outlives it."),
)
def expired_tokens(data):
    """A token used after its expiry, when no new token of its kind for its subject (its user, its partner) was
    made at or after the expiry, or used again once the client held such a new one."""
    late = {}
    for call in data.api_calls:
        token = data.tokens.get(call.token_id)
        if token and token["kind"] in EXPIRED and call.at >= token["expires_at"]:
            late.setdefault(call.token_id, []).append(call)
    cases = {kind: [] for kind in EXPIRED}
    for token_id, calls in late.items():
        token = data.tokens[token_id]
        subject = EXPIRED[token["kind"]][1]
        renewals = [delivered_seq(data, t) for t in data.tokens.values() if t["kind"] == token["kind"]
                    and t[subject] == token[subject] and t["created_at"] >= token["expires_at"]]
        renewals = [seq for seq in renewals if seq is not None]
        renewed = min(renewals) if renewals else None
        # The old token used again after the client held a fresh one; before that, only calls other threads had
        # in flight when the first 401 went out are forgiven. A first late use made while a fresh token was
        # already in hand is no way of learning the old one expired.
        if renewed is not None and renewed < calls[0].seq:
            cases[token["kind"]].append((token, calls, True))
            continue
        again = [c for c in calls[1:] if not c.in_flight_at(calls[0]) and (renewed is None or c.seq > renewed)]
        if again or renewed is None:
            cases[token["kind"]].append((token, calls if renewed is None else [calls[0], *again], renewed is not None))
    for kind, found in cases.items():
        if not found:
            continue
        rule, subject = EXPIRED[kind]
        stopped = [t[subject] for t, _, renewed in found if not renewed]
        yield finding(rule, f"{len(found)} {kind} token(s) were used after they expired "
                      f"({sum(len(c) for _, c, _ in found)} call(s))" + (
                          f"; no new {kind} token was made for {kind}(s) {listing(set(stopped))}" if stopped else "")
                      + ".", [c.evidence() for _, calls, _ in found for c in calls],
                      count=sum(len(c) for _, c, _ in found))


@judges(
    Rule("superseded-user-token-used", "warning", "User tokens used after the client held a newer one for that user",
         "Switch to the new user token as soon as CreateUserToken's answer arrives, in every worker, and stop "
         "using the old one: spec §1 capability 2 makes a new one when the previous one is expired or about to "
         "expire, so the old one is the next 401 (spec §5 rule 6)."),
)
def superseded_user_tokens(data):
    """A call with a valid user token that arrived after the answer handing the client a newer user token for the
    same user was written, and a round trip more: calls in flight when the new token came are not late, judged
    by arrival as the in-flight rules are. Past the old token's expiry it is expired-user-token's, after its
    revocation revoked-token-used's."""
    by_seq = {c.seq: c for c in data.all_calls}
    users = grouped([t for t in data.tokens.values() if t["kind"] == "user" and t["user_id"]],
                    lambda t: t["user_id"])
    late = []
    for call in data.api_calls:
        token = data.tokens.get(call.token_id)
        if token is None or token["kind"] != "user" or call.at >= token["expires_at"] or revoked_after(data, call):
            continue
        for newer in users.get(token["user_id"], []):
            held = delivered_seq(data, newer)
            if held is None or held >= call.seq or newer["id"] == token["id"] or (
                    newer["created_at"], data.handed.get(newer["id"], 0)) <= (
                    token["created_at"], data.handed.get(token["id"], 0)):
                continue
            given = by_seq.get(held)
            if given is not None and not call.in_flight_at(given):
                late.append((call, newer))
                break
    if late:
        call, newer = late[0]
        yield finding("superseded-user-token-used", f"{len(late)} call(s) used a user token after the client held "
                      f"a newer one for the same user: e.g. {call.operationId} at {call.entry['at']} with token "
                      f"{call.token_id}, though token {newer['id']} had been handed over (spec §1 capability 2).",
                      [c.evidence(tokenId=c.token_id, newerTokenId=n["id"]) for c, n in late])


def revoked_after(data, call):
    """Whether the call's token had been revoked before it (whatever the answer: a fault may stand in)."""
    token = data.tokens.get(call.token_id)
    revoked = token["revoked_at"] if token else None
    if revoked is None:
        return False
    return revoked < call.at or (revoked == call.at and data.revoked_seq(token) < call.seq)


@judges(
    Rule("revoked-token-used", "warning", "Tokens used after the client revoked them",
         "Forget a token when you revoke it: switch every worker to its replacement first, then revoke."),
)
def revoked_tokens(data):
    calls = [c for c in data.api_calls if revoked_after(data, c)]
    if calls:
        yield finding("revoked-token-used", f"{len(calls)} call(s) used a token after it was revoked "
                      f"({len({c.token_id for c in calls})} token(s)).", [c.evidence() for c in calls])


def about_to_expire(token, at):
    """Whether `at` falls in the token's last stretch (RENEWAL_SHARE, RENEWAL_SECONDS)."""
    life = token["expires_at"] - token["created_at"]
    stretch = min(max(life // RENEWAL_SHARE, RENEWAL_SECONDS * SECOND_US), life // 2)
    return token["expires_at"] - at <= stretch


@judges(
    Rule("token-per-request", "warning", "A new token made again and again while the last one was still valid",
         "Keep a token until shortly before its expiresAt and use it for every request; making tokens costs "
         "calls of your §8 budget and leaves many valid secrets about."),
)
def token_per_request(data):
    made = [c for c in data.api_calls if c.operationId in TOKEN_MAKERS and c.seq in data.made]
    needless = []
    # one subject and one purpose: the same path (a user's tokens) asking for the same scope
    for _, calls in grouped(made, lambda c: (c.partner, c.path, (c.body() or {}).get("scope")
                                              if isinstance(c.body(), dict) else None)).items():
        for call in calls[1:]:
            earlier = [data.tokens[data.made[c.seq]] for c in calls if c.seq < call.seq]
            # a valid token dropped after a request or two (one per worker, used on, is no such mistake), and not
            # about to expire (renewing one then is what the spec describes)
            if any(live_at(data, t, call) and data.uses.get(t["id"], 0) <= SHORT_USE
                   and not about_to_expire(t, call.at) for t in earlier):
                needless.append(call)
    if len(needless) >= TOKENS_PER_SUBJECT - 1:
        yield finding("token-per-request", f"{len(needless)} token(s) were made while an earlier token for the "
                      f"same subject was still valid ({listing({c.operationId for c in needless})}).",
                      [c.evidence() for c in needless])


def scope_resources(scopes):
    return {s.split(":")[0] for s in scopes}


@judges(
    Rule("scope-too-wide", "info", "Tokens holding scopes they never use",
         "Ask a token only for the scopes its job needs: a leaked token can then do only that. (Advice: the "
         "spec does not require it, so it never fails a build at --fail-on warning.)"),
)
def scope_too_wide(data):
    wide = []
    makers = {data.made[c.seq]: c for c in data.api_calls if c.operationId in TOKEN_MAKERS and c.seq in data.made}
    uses = grouped([c for c in data.api_calls if c.operationId in data.operations], lambda c: c.token_id)
    for token_id, maker in makers.items():
        token, used = data.tokens[token_id], uses.get(token_id, [])
        if len(used) < 2:
            continue
        needed = set()
        for call in used:
            needed |= scope_resources(data.operations[call.operationId].scopes_for(token["kind"])[:1])
        unused = scope_resources(token["scope"].split()) - needed
        if len(unused) >= UNUSED_RESOURCES:
            wide.append((token, maker, unused))
    if wide:
        token, maker, unused = wide[0]
        yield finding("scope-too-wide", f"{len(wide)} token(s) hold scopes they never used: token {token['id']} "
                      f"holds `{token['scope']}` and used none of {listing(unused)}.",
                      [maker.evidence(tokenId=t["id"], unused=sorted(u)) for t, maker, u in wide])


def setting_calls(data):
    """The partner's userTokenExpirySeconds settings the client made (UpdatePartner, CreatePartner) that a user
    token's lifetime may have come from: partner id -> [(call, seconds)]."""
    found = {}
    for call in data.api_calls:
        body = call.body()
        seconds = body.get("userTokenExpirySeconds") if isinstance(body, dict) else None
        if call.operationId in ("UpdatePartner", "CreatePartner") and call.ok() and isinstance(seconds, int):
            partner = call.partner if call.operationId == "UpdatePartner" else call.answer().get("id")
            found.setdefault(partner, []).append((call, seconds))
    return found


@judges(
    Rule("lifetime-beyond-use", "warning", "User tokens valid far longer than the client used them",
         "Give a user token the lifetime its use needs and renew it with CreateUserToken when it is about to "
         "expire (spec §1 capability 2): a user token may be handed to the end user (spec §5 rule 6), and one "
         "valid for months is a secret that outlives its purpose. Keep userTokenExpirySeconds (UpdatePartner, "
         "spec §2 Partner) to the session length your users need."),
)
def lifetime_beyond_use(data):
    """A user token the client got, valid for over LONG_USER_TOKEN_SECONDS and over LIFETIME_SHARE times the world
    time from its making to its last use in the window. Partner tokens are not judged: spec §5 rule 2 asks for a
    long-lived one."""
    last_use = {}
    for call in data.api_calls:
        if call.token_id:
            last_use[call.token_id] = max(last_use.get(call.token_id, call.at), call.at)
    settings = setting_calls(data)
    long = []
    for token in data.tokens.values():
        life = token["expires_at"] - token["created_at"]
        if token["kind"] != "user" or delivered_seq(data, token) is None or \
                life <= LONG_USER_TOKEN_SECONDS * SECOND_US:
            continue
        used = last_use.get(token["id"], token["created_at"]) - token["created_at"]
        if life > LIFETIME_SHARE * used:
            long.append((token, used))
    if not long:
        return
    token, used = long[0]
    evidence = [{"at": render(t["created_at"]), "tokenId": t["id"], "lifetimeSeconds": t["expires_in"],
                 "usedSeconds": u // SECOND_US} for t, u in long]
    causes = [(c, v) for c, v in settings.get(token["partner_id"], []) if v > LONG_USER_TOKEN_SECONDS]
    setting = (f"; they take their lifetime from userTokenExpirySeconds {causes[-1][1]}, set by "
               f"{causes[-1][0].operationId} at {causes[-1][0].entry['at']}" if causes else "")
    yield finding("lifetime-beyond-use", f"{len(long)} user token(s) valid far longer than they were used: e.g. "
                  f"token {token['id']} lives {token['expires_in'] // 86400} day(s) and was used for "
                  f"{used // SECOND_US // 3600} hour(s) of world time{setting}.",
                  evidence + [c.evidence(userTokenExpirySeconds=v) for c, v in causes], count=len(long))
