"""A deployment profile: the choices a deployment made where the spec is silent, as a versioned JSON document.

A conformance run learns it (`ptas conform --profile-out FILE`, profile_learn.py); the simulator serves it
(`ptas serve --profile FILE`); `ptas profile show|diff` reads it. Each known choice carries its value, a
sentence saying it in plain words and its evidence (the request and response it was seen in, tokens and
secrets masked); a choice the run could not observe is listed under `unknown` with why. docs/profiles.md.
"""

import functools
import json
import re

FORMAT = "ptas-deployment-profile"
VERSION = 1

# Every choice a profile can hold, in the order `show` prints them, with what it is about.
CHOICES = {
    "operations": "where each operation lives (method, path, operationId, request field names)",
    "createStatus": "the status of a successful create",
    "deleteStatus": "the status (and body) of a successful delete",
    "revokeStatus": "the status of a token revocation",
    "testEventStatus": "the status of a test event sent",
    "locations": "whether a create names the new record in a Location header",
    "put": "PUT: merge or replace",
    "filters": "how a list's filters match",
    "lists": "the shape of list answers",
    "listOrder": "the order of list entries",
    "listEntries": "list entries: summaries or details",
    "records": "field names of records the spec does not show",
    "ids": "the form of each kind of id (UUID, number, prefix) and the answer to a malformed id",
    "userToken": "the shape of the first user token",
    "invalidBody": "the status of an invalid request body",
    "problems": "ProblemDetails members and type URIs",
    "rateLimit": "the 429 answer (headers and body)",
    "deployTokens": "what a deploy token (partner:create only) may do",
    "paging": "page size, page-reference format and order",
    "headers": "headers sent with one value on every answer",
    "emptyAnswers": "successes answered without a body",
    "removedPaths": "the answer to a path the spec removed",
    "nulls": "null members the spec does not name: sent or left out",
    "memberTypes": "JSON types of record members",
    "membersLeftOut": "record members the deployment never answers",
    "operationMembersLeftOut": "record members only some operations answer",
    # Choices no default run observes (listed under `unknown` with why; the simulator keeps its own).
    "operationLimits": "the additional rate limits of some operations",
    "repeatedRevocation": "what revoking a token already revoked answers",
    "pageSizeBeyond": "what a page size above the largest page served answers",
}
UNOBSERVED = ("operationLimits", "repeatedRevocation", "pageSizeBeyond")


# The kinds of record whose ids a partner sees, named as the simulator's document names them: by the component
# a record is, by a property that refers to one (`userId`, or a nested `account` in a notification), and by the
# path segment a record is found under. A profile's `ids` choice holds the deployment's id form per kind.
COMPONENT_KIND = {"User": "user", "UserCreated": "user", "UserWithStatistics": "user", "Account": "account",
                  "AccountChanged": "account", "Partner": "partner", "Webhook": "webhook", "Token": "token",
                  "Report": "report", "DataImport": "dataimport", "Transaction": "transaction",
                  "AccountUiSession": "accountuisession", "UserUiSession": "useruisession"}
KEY_KIND = {"userId": "user", "accountId": "account", "partnerId": "partner", "webhookId": "webhook",
            "tokenId": "token", "reportId": "report", "dataImportId": "dataimport", "transactionId": "transaction",
            "user": "user", "account": "account", "token": "token"}
SEGMENT_KIND = {"users": "user", "accounts": "account", "partners": "partner", "webhooks": "webhook",
                "tokens": "token", "reports": "report", "dataimports": "dataimport", "transactions": "transaction",
                "accountui": "accountuisession", "userui": "useruisession"}


# The members the spec names, per record (the simulator's component; a member of a record's inline object as
# `statistics.first`, of its array's entries as `fields[].deprecationReason`): spec §2's token table and resource
# list, §1's statistics, §4's notes. A member the spec calls optional (a user's email, §4.2 note 1) is not one of
# them: a record may lack it. Where a deployment leaves out null members (`nulls`), these stay, null or not.
_TOKEN = ("id", "name", "createdAt", "expiresIn", "expiresAt", "isRevoked", "isExpired", "isValid", "scope",
          "lastUsedAt", "revokedAt", "accessToken")
_USER = ("id", "name", "token", "deletedAt")
_STATISTICS = ("statistics", "statistics.count", "statistics.first", "statistics.last")
_ACCOUNT = ("errors", "warnings", "warningDetails", *_STATISTICS)
_FIELD = ("isDeprecated", "deprecationReason")
SPEC_MEMBERS = {
    "Token": _TOKEN, "User": _USER, "UserCreated": _USER, "UserWithStatistics": (*_USER, *_STATISTICS),
    "Partner": ("email", "redirectUrls", "name", "userTokenExpirySeconds", "uiSettings", "uiSettings.styling"),
    "Account": _ACCOUNT, "AccountChanged": _ACCOUNT,
    "AccountType": ("accountFields", "transactionFields", "helpUrls", "hasPspReports", "state", "errors", "warnings"),
    "AccountField": ("Type", *_FIELD), "TransactionField": _FIELD,
    "Transaction": ("createdAt", "orderNumber", "bookingText", "classification", "transactionType", "shopper",
                    "reportId", "fields", *(f"fields[].{member}" for member in _FIELD)),
    "TransactionPage": ("transactions", "previousPageReference", "nextPageReference"),
    "Report": ("errors", "warnings"), "DataImport": ("errors", "warnings"),
    "AccountUiSession": ("accountTypeIds", "accountTypeId"), "OauthRedirect": ("redirectUrl", "authReference"),
}


# A number written as a decimal string (`memberTypes`): digits, a fraction's digits after a point.
DECIMAL = re.compile(r"-?[0-9]+(\.[0-9]+)?")


def spec_names(component, member):
    """Whether the spec names `member` of the record `component` (SPEC_MEMBERS)."""
    return member in SPEC_MEMBERS.get(component, ())


# The alphabets of ids that are strings of a fixed length (a hex digest, base62...), smallest first: the learner
# names the smallest that holds a deployment's ids, the profiled simulator writes and reads ids in it.
ALPHABETS = {"digits": "0123456789", "hex": "0123456789abcdef", "HEX": "0123456789ABCDEF",
             "base36": "0123456789abcdefghijklmnopqrstuvwxyz", "BASE36": "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ",
             "base62": "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"}


class ProfileError(ValueError):
    """A file that is not a profile this version reads."""


def new(target):
    return {"format": FORMAT, "version": VERSION, "target": target, "choices": {}, "unknown": {}}


def known(profile, name):
    """The value of a known choice, or None."""
    entry = (profile or {}).get("choices", {}).get(name)
    return entry.get("value") if isinstance(entry, dict) else None


def load(path):
    try:
        with open(path, encoding="utf-8") as handle:
            profile = json.load(handle)
    except OSError as error:
        raise ProfileError(f"cannot read {path}: {error.strerror or error}") from None
    except ValueError as error:
        raise ProfileError(f"{path} is not JSON: {error}") from None
    except RecursionError:
        raise ProfileError(f"{path} is nested too deeply to be a deployment profile") from None
    return check(profile, path)


def check(profile, where="the profile"):
    """The profile, when it is one this version serves: every choice of the form the profile layer reads, and no
    operation under `/_sandbox` (the sandbox's own control API is never a deployment's to move)."""
    if not isinstance(profile, dict) or profile.get("format") != FORMAT:
        raise ProfileError(f"{where} is not a deployment profile (no \"format\": \"{FORMAT}\")")
    if profile.get("version") != VERSION:
        raise ProfileError(f"{where} is version {profile.get('version')!r}; this ptas reads version {VERSION}")
    from jsonschema.exceptions import best_match
    try:
        error = best_match(_validator().iter_errors(profile))
    except RecursionError:
        raise ProfileError(f"{where} is nested too deeply to be a deployment profile") from None
    if error is not None:
        at = "/".join(str(part) for part in error.absolute_path) or "the top level"
        raise ProfileError(f"{where}: {at}: {error.message}")
    for name, where_it_is in (known(profile, "operations") or {}).items():
        if where_it_is["path"].startswith("/_sandbox"):
            raise ProfileError(f"{where}: operation {name} is placed under /_sandbox, the sandbox's control API, "
                               "which a profile cannot move or replace")
    return profile


# What the profile layer reads of each choice's value; other members are allowed (a newer learner may add notes).
_STATUS = {"type": "integer", "minimum": 100, "maximum": 599}
_STATUSES = {"type": "object", "additionalProperties": _STATUS}
_NAMES = {"type": "object", "additionalProperties": {"type": "string"}}
_ID_FORM = {"type": "object", "required": ["form"], "properties": {
    "form": {"type": "string"}, "prefix": {"type": "string"}, "rest": {"type": "string"},
    "alphabet": {"enum": list(ALPHABETS)}, "length": {"type": ["integer", "null"], "minimum": 0},
    "json": {"type": "string"}}}
_VALUES = {
    "operations": {"type": "object", "additionalProperties": {
        "type": "object", "required": ["method", "path"], "properties": {
            "method": {"enum": ["GET", "PUT", "POST", "PATCH", "DELETE"]},
            "path": {"type": "string", "pattern": "^/"}, "operationId": {"type": ["string", "null"]},
            "fields": _NAMES, "parameters": _NAMES, "bounds": {"type": "object", "additionalProperties": {
                "type": "object", "properties": {"maximum": {"type": ["integer", "null"]},
                                                 "minimum": {"type": ["integer", "null"]}}}}}}},
    "createStatus": _STATUSES,
    "deleteStatus": {"type": "object", "additionalProperties": {
        "type": "object", "required": ["status"], "properties": {
            "status": _STATUS, "body": {"type": "boolean"},
            "answer": {"anyOf": [{"type": "string"}, {"type": "object", "properties": {"template": {}}}]}}}},
    "revokeStatus": _STATUSES,
    "testEventStatus": _STATUSES,
    "locations": {"type": "object", "additionalProperties": {"type": "boolean"}},
    "put": {"type": "object", "properties": {"mode": {"type": "string"}, "partialStatus": _STATUS, "operations": {
        "type": "object", "additionalProperties": {"type": "object", "properties": {
            "mode": {"enum": ["merge", "replace"]}, "partialStatus": _STATUS}}}}},
    "filters": {"type": "object", "additionalProperties": {"type": "object", "additionalProperties": {
        "enum": ["exact", "ignores case"]}}},
    "lists": {"type": "object", "additionalProperties": {
        "type": "object", "required": ["shape"], "properties": {
            "shape": {"enum": ["array", "object"]}, "key": {"type": "string"}, "count": {"type": "string"}}}},
    "listOrder": _NAMES,
    "listEntries": {"type": "object", "additionalProperties": {
        "type": ["object", "null"], "properties": {"keys": {"type": "array", "items": {"type": "string"}}}}},
    "records": {"type": "object", "additionalProperties": {"type": "object", "additionalProperties": _NAMES}},
    "ids": {"type": "object", "properties": {
        "format": {"type": "string"}, "malformedStatus": _STATUS, "sequence": {"type": "string"},
        "checks": {"type": "object", "properties": {"beforeToken": {"type": "boolean"},
                                                    "beforeScope": {"type": "boolean"}}},
        "kinds": {"type": "object", "additionalProperties": _ID_FORM}}},
    "userToken": {"enum": ["object", "string"]},
    "invalidBody": {"type": "object", "properties": {"status": _STATUS, "notJson": _STATUS, "errors": {
        "type": "object", "required": ["form"], "properties": {
            "form": {"enum": ["object", "list"]}, "keys": {"enum": ["path", "pointer"]},
            "messages": {"enum": ["list", "string"]}, "pointer": {"type": "string"}, "detail": {"type": "string"}}}}},
    "problems": {"type": "object", "properties": {
        "mediaType": {"type": "string", "pattern": "^[a-z]+/[a-z0-9.+-]+$"}, "titles": {"enum": ["reason"]},
        "members": {"type": "array", "items": {"type": "string"}},
        "types": {"type": "object", "additionalProperties": {"type": ["string", "null"]}},
        "situations": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}},
        "properties": {"type": "object", "additionalProperties": {"type": "object"}}}},
    "rateLimit": {"type": "object", "properties": {
        "status": _STATUS, "headers": {"type": "array", "items": {"type": "string"}},
        "retryAfter": {"enum": ["seconds", "http-date", "other"]}, "documented": {"type": "boolean"},
        "members": {"type": "array", "items": {"type": "string"}}}},
    "deployTokens": {"type": "object", "properties": {"createsChildTokens": {"type": "boolean"}, "status": _STATUS}},
    "paging": {"type": "object", "properties": {
        "pageSize": {"type": ["integer", "null"], "minimum": 1}, "referenceForm": {"type": "string"},
        "order": {"enum": ["oldest first", "newest first"]},
        "firstPage": {"type": "integer"}, "url": {"type": ["object", "null"]}, "prefixes": {
            "type": "object", "additionalProperties": False, "properties": {
                "nextPageReference": {"type": "string"}, "previousPageReference": {"type": "string"}}}}},
    "headers": {"type": "object", "additionalProperties": {"type": "object", "required": ["value"], "properties": {
        "value": {"type": "string"}, "documented": {"type": "array", "items": {"type": "string"}},
        "schema": {"type": "object"}}}},
    "emptyAnswers": {"type": "array", "items": {"type": "string"}},
    "removedPaths": {"type": "object", "required": ["status"], "properties": {"status": _STATUS}},
    "nulls": {"enum": ["sent", "omitted"]},
    "membersLeftOut": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}},
    "operationMembersLeftOut": {"type": "object", "additionalProperties": {"type": "object", "additionalProperties": {
        "type": "array", "items": {"type": "string"}}}},
    "memberTypes": {"type": "object", "additionalProperties": {"type": "object", "additionalProperties": {
        "type": "object", "required": ["type"], "properties": {
            "type": {"enum": ["string", "number", "integer", "boolean"]},
            "fractionDigits": {"type": ["integer", "null"], "minimum": 0}, "schema": {"type": "object"}}}}},
}
_SCHEMA = {
    "type": "object", "required": ["format", "version", "choices"],
    "properties": {
        "target": {"type": "string"},
        "unknown": {"type": "object"},
        "choices": {"type": "object", "properties": {
            name: {"type": "object", "required": ["value"], "properties": {
                "value": value, "says": {"type": ["string", "null"]}, "evidence": {"type": "array"}}}
            for name, value in _VALUES.items()}},
    },
}


@functools.cache
def _validator():
    """Made when a profile is first checked: jsonschema's import is costly at start-up, and most starts check
    no profile."""
    from jsonschema import Draft202012Validator
    return Draft202012Validator(_SCHEMA)


def dump(profile, path):
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(profile, handle, indent=2, sort_keys=False)
        handle.write("\n")


# -- in plain words -----------------------------------------------------------------------------------------
def says(profile, name):
    entry = profile.get("choices", {}).get(name)
    return entry.get("says") if isinstance(entry, dict) else None


def show(profile, evidence=False):
    """The profile in plain words: one line per known choice, then the unknown ones with why."""
    lines = [f"deployment profile of {profile.get('target', '?')} (format version {profile.get('version')})"]
    for name, about in CHOICES.items():
        entry = profile["choices"].get(name)
        if not isinstance(entry, dict):
            continue
        lines.append(f"  {about}: {entry.get('says') or json.dumps(entry.get('value'))}")
        if evidence:
            for seen in entry.get("evidence", [])[:3]:
                lines.append(f"      seen: {describe_evidence(seen)}")
    unknown = profile.get("unknown", {})
    if unknown:
        lines.append("not known (the simulator keeps its own choice here):")
        lines += [f"  {CHOICES.get(name, name)}: {why}" for name, why in unknown.items() if name not in UNOBSERVED]
        never = [CHOICES[name] for name in UNOBSERVED if name in unknown]
        if never:       # the same for every run: one line (their why is in the file)
            lines.append(f"  not observed by a run: {'; '.join(never)}")
    return "\n".join(lines)


def describe_evidence(seen):
    request, response = seen.get("request", {}), seen.get("response", {})
    if "document" in seen:
        return f"the target's document, {seen['document']}"
    return f"{request.get('method')} {request.get('path')} answered {response.get('status')}"


def diff(a, b, name_a="A", name_b="B"):
    """What differs between two profiles, in plain words (empty when they agree)."""
    lines = []
    for name, about in CHOICES.items():
        va, vb = known(a, name), known(b, name)
        if va == vb:
            continue
        if va is None or vb is None:
            have, side = (vb, name_b) if va is None else (va, name_a)
            other = name_a if side == name_b else name_b
            why = (a if va is None else b).get("unknown", {}).get(name, "not observed")
            lines.append(f"{about}: only {side} knows it ({says(a if va is not None else b, name)}); "
                         f"{other}: unknown ({why})")
            continue
        small = not isinstance(va, dict) or len(set(va) | set(vb)) <= 3
        if small and says(a, name) and says(b, name) and says(a, name) != says(b, name):
            lines.append(f"{about}: {name_a}: {says(a, name)}; {name_b}: {says(b, name)}")
        elif isinstance(va, dict) and isinstance(vb, dict):
            for key in sorted(set(va) | set(vb)):
                if va.get(key) != vb.get(key):
                    lines.append(f"{about}, {key}: {name_a} {words(va.get(key))}, {name_b} {words(vb.get(key))}")
        else:
            lines.append(f"{about}: {name_a} {says(a, name) or words(va)}; {name_b} {says(b, name) or words(vb)}")
    return lines


def words(value):
    if value is None:
        return "(not there)"
    if isinstance(value, dict):
        return ", ".join(f"{k} {words(v)}" for k, v in value.items())
    if isinstance(value, list):
        return "[" + ", ".join(words(v) for v in value) + "]"
    return str(value)
