"""Steps of the account type features (spec §1 capability 3, §2 account type resource, §4.3 GetAccountType(s)).

The spec shows what accountFields carry (Type, isDeprecated, deprecationReason) but not the payload of
CreateAccount; the credentials a client sends are built here, in one place, from each field (`form_for`),
never from a hard-coded account type.
"""

import base64
import re

from pytest_bdd import then, when

from ..bodies import NoSchema, identifier
from ..checks import items, reports_problems
from ..scene import ME, check
from . import acting, phrase

MAX_TYPES = 10
SAMPLE_VALUES = {"Text": "conformance", "Secret": "s3cret-value", "Number": 1,
                 "File": base64.b64encode(b"-----BEGIN CERTIFICATE-----\n").decode()}


def uses_oauth(account_type):
    """Spec §1: an account type uses OAuth2 when an accountFields element has Type Auth."""
    return any(f.get("Type") == "Auth" for f in account_type.get("accountFields", []))


# What an accountFields element may call the credential's key and its being optional: the spec shows Type,
# isDeprecated and deprecationReason only.
KEYS = ("name", "key", "fieldName", "field", "id", "code")
OPTIONAL = {"isRequired": False, "required": False, "isOptional": True, "optional": True, "mandatory": False}
SHOWN = {"Type", "isDeprecated", "deprecationReason"}


def field_key(field):
    """The key under which a credential is sent, as the target names it in the accountFields element."""
    for key in KEYS:
        if isinstance(field.get(key), str) and field[key]:
            return field[key]
    plain = [v for k, v in field.items() if k not in SHOWN and isinstance(v, str) and re.fullmatch(r"[\w.-]+", v)]
    return plain[0] if len(plain) == 1 else None


def form_for(account_type):
    """Credentials for every required, non-deprecated field, by its Type (the form a client builds)."""
    values = {}
    for field in account_type.get("accountFields", []):
        kind = field.get("Type")
        if kind == "Auth" or field.get("isDeprecated") or any(field.get(k) is v for k, v in OPTIONAL.items()):
            continue
        key = field_key(field)
        if key is None:
            raise NoSchema(f"an accountFields element of {type_name(account_type)} names no key the harness can "
                           f"find ({sorted(field)})")
        options = next((field[k] for k in ("options", "values", "choices") if isinstance(field.get(k), list)), None)
        values[key] = options[0] if kind == "Choice" and options else SAMPLE_VALUES.get(kind, "x")
    return values


def type_name(entry):
    return identifier(entry, "accountTypeId", "typeId") if isinstance(entry, dict) else entry


def type_reply(scene, type_id):
    """GetAccountType as I: once a run on a deployment, as the scenarios that read an account type (to check it,
    build a form or find its fields) do not change it."""
    return scene.pooled(("account type", type_id), lambda: scene.client.call("GetAccountType", token=scene.token,
                                                                             params={"id": type_id}))


def account_type(scene, type_id):
    """The account type's detail (GetAccountType), read once per scenario, and once a run on a deployment."""
    cache = scene.account_types
    if type_id not in cache:
        cache[type_id] = scene.must(type_reply(scene, type_id), f"read the account type {type_id}").body
    return cache[type_id]


@when(acting("{actor} lists the account types"))
def list_types(scene, actor):
    if actor.strip('"') in ME:      # the run's one read of the list, as no scenario changes it
        scene.reply = scene.pooled(("account types",), lambda: scene.client.call("GetAccountTypes", token=scene.token))
        scene.replies.append(scene.reply)
    else:
        scene.call("GetAccountTypes", actor)


@when(acting('{actor} reads the account type "{type_id}"'))
def read_type(scene, actor, type_id):
    if actor.strip('"') in ME:      # the run's one read of it (type_reply)
        scene.reply = type_reply(scene, type_id)
        scene.replies.append(scene.reply)
    else:
        scene.call("GetAccountType", actor, params={"id": type_id})


@then(phrase('the list has the account types "{first}", "{second}" and "{third}"'))
def list_has_types(scene, first, second, third):
    ids = {identifier(t, *scene.target.operations.hints("GetAccountType")) for t in items(scene.reply, "account types")}
    missing = {first, second, third} - ids
    check(not missing, f"account types missing from GetAccountTypes: {sorted(missing)}")


@then("every account type, read on its own, describes its fields, help, reports and provider status")
def every_type_described(scene):
    """Spec §1 capability 4: GetAccountType is the detail; list entries may be summaries. Read each (at most
    MAX_TYPES, to stay within the rate limit on a deployment)."""
    hints = scene.target.operations.hints("GetAccountType")
    listed = [identifier(t, *hints) for t in items(scene.reply, "account types")]
    check(listed and None not in listed, f"every listed account type carries its id, got {listed[:5]}")
    for type_id in listed[:MAX_TYPES]:
        check_type(account_type(scene, type_id))


@then("every account type in the list describes its fields, help, reports and provider status")
def every_listed_type_described(scene):
    for entry in items(scene.reply, "account types"):
        check_type(entry)


@then("the account type describes its fields, help, reports and provider status")
def type_described(scene):
    check(scene.reply.ok, f"expected the account type, got {scene.reply.describe()}")
    check_type(scene.reply.body)


def check_type(entry):
    name = type_name(entry)
    for field in ("accountFields", "transactionFields", "helpUrls", "hasPspReports", "state", "errors", "warnings"):
        check(field in entry, f"the account type {name} has {field} (spec §2)")
    for field in entry["accountFields"]:
        for key in ("Type", "isDeprecated", "deprecationReason"):
            check(key in field, f"{name}: every accountFields element has {key} (spec §2)")
    for field in entry["transactionFields"]:
        for key in ("isDeprecated", "deprecationReason"):
            check(key in field, f"{name}: every transactionFields element has {key} (spec §2)")
    reports_problems(entry, f"the account type {name}")


@then(phrase("the account type {uses} OAuth2"))
def type_oauth(scene, uses):
    check(uses_oauth(scene.reply.body) == (uses == "uses"),
          f"{scene.reply.body.get('id')}: an accountFields element of Type Auth means OAuth2 (spec §1)")


@then(phrase("the account type {has} reports"))
def type_reports(scene, has):
    check(scene.reply.body.get("hasPspReports") is (has == "has"),
          f"hasPspReports of {scene.reply.body.get('id')}: {scene.reply.body.get('hasPspReports')!r}")
