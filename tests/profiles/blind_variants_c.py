"""Blind variants, third round: faithful deployments of the Payment Transactions Aggregation Service, each making
ONE choice the spec leaves open, other than the choices of tests/conformance/variants.py, tests/conformance/
dialects.py, tests/profiles/variants.py, tests/profiles/blind_variants.py and tests/profiles/blind_variants_b.py.
Each publishes its choice in its own /openapi.json, as a real deployment's document would, and changes nothing the
spec states. Every choice here shows in the ordinary traffic of a conformance run (answers to the spec's
operations), not only to a client spending limits or hunting errors.

Written without reading the profile learner or the profile layer. tests/profiles/blind_probe_b.py already observes
every choice here (no probe of the third round is needed).
"""

import json
from urllib.parse import urlencode

from tests.conformance.variants import SERVICE, Variant, json_of, operation_object, request_schema
from tests.profiles.blind_variants import status_line, without
from tests.profiles.blind_variants_b import query_of

TRANSACTION_READS = ("GetTransactions", "GetTransaction")


def schema_of(document, name):
    return document["components"]["schemas"].get(name) or {}


def drop_property(schema, name):
    """`name` is no longer a property of `schema` (nor required)."""
    schema.get("properties", {}).pop(name, None)
    if isinstance(schema.get("required"), list):
        schema["required"] = [r for r in schema["required"] if r != name]


def entries_of(body):
    """The records of an answer: the body itself, or the entries of its list."""
    if isinstance(body, list):
        return [e for e in body if isinstance(e, dict)]
    if not isinstance(body, dict):
        return []
    lists = [v for v in body.values() if isinstance(v, list)]
    return [e for e in lists[0] if isinstance(e, dict)] if len(body) == 1 and lists else [body]


# -- 1. updates answer 204 No Content --------------------------------------------------------------------------
class Updates204(Variant):
    """A successful update of a user, a partner (own or child) or a webhook answers 204 No Content: the client
    already holds what it sent, and reads the record when it wants it whole. Spec §4.2/§4.3: the payloads of
    UpdateUser, UpdatePartner, the child-partner update and the webhook updates are not shown. UpdateAccount keeps
    its body: spec §2 says its response carries errors and warningDetails."""

    name = "updates answer 204"
    UPDATES = ("UpdateUser", "UpdatePartner", "UpdateChildPartner", "UpdateWebhook", "PatchWebhook")

    def publish(self, document):
        for name in self.UPDATES:
            op = operation_object(document, name)
            op["responses"].pop("200", None)
            op["responses"]["204"] = {"description": "updated; read the record for its new state"}
        return document

    def response(self, operation, environ, status, headers, data):
        if operation in self.UPDATES and status.startswith("200"):
            return status_line(204), without(headers, "Content-Type"), b""
        return status, headers, data


# -- 2. CreateAccount answers 202 Accepted -----------------------------------------------------------------------
class CreateAccountAccepted(Variant):
    """CreateAccount answers 202 Accepted, with the account as it stands: the account exists, and fetching its
    transactions from the provider has only begun (spec §1 capability 5: "from a few seconds up to hours"). The
    body is the create response spec §2 and §4.3 describe (errors, warnings, warningDetails, statistics); its status
    is not shown. The other creates stay 201."""

    name = "CreateAccount answers 202"

    def publish(self, document):
        op = operation_object(document, "CreateAccount")
        created = op["responses"].pop("201", None) or {}
        op["responses"]["202"] = {**created, "description": "the account is created; its transactions are being "
                                                            "fetched (watch statistics or TransactionsImported)"}
        return document

    def response(self, operation, environ, status, headers, data):
        if operation == "CreateAccount" and status.startswith("201"):
            return status_line(202), headers, data
        return status, headers, data


# -- 3. a webhook's signing secret is shown once -----------------------------------------------------------------
WEBHOOK_READS = ("GetWebhooks", "GetWebhook", "UpdateWebhook", "PatchWebhook")


class WebhookSecretOnce(Variant):
    """A webhook's signing secret is in the answer of CreateWebhook only; listing, reading or changing a webhook
    never shows it again (a client stores it when it creates the webhook, as it stores a token's accessToken). Spec
    §6: the webhook's field names, and the signature of notifications, are not shown."""

    name = "webhook secret shown once"

    def publish(self, document):
        schemas = document["components"]["schemas"]
        webhook = schemas.get("Webhook")
        if not webhook or "secret" not in webhook.get("properties", {}):
            return document
        created = json.loads(json.dumps(webhook))
        created["description"] = "The webhook as created: the only answer that carries its signing secret."
        schemas["WebhookCreated"] = created
        drop_property(webhook, "secret")
        webhook["description"] = "A subscription; its signing secret is shown once, when it is created."
        op = operation_object(document, "CreateWebhook")
        for response in op["responses"].values():
            schema = (response.get("content", {}).get("application/json") or {}).get("schema")
            if schema == {"$ref": "#/components/schemas/Webhook"}:
                schema["$ref"] = "#/components/schemas/WebhookCreated"
        return document

    def response(self, operation, environ, status, headers, data):
        body = json_of(data)
        if operation not in WEBHOOK_READS or not status.startswith("2") or not isinstance(body, (dict, list)):
            return status, headers, data
        for entry in entries_of(body):
            entry.pop("secret", None)
        return status, headers, json.dumps(body).encode()


# -- 4. user tokens of new partners live one hour -------------------------------------------------------------
class HourLongUserTokens(Variant):
    """A child partner created without userTokenExpirySeconds gets 3600 (user tokens valid one hour), not a day:
    spec §5 rule 6 makes the validity of user tokens the partner setting userTokenExpirySeconds, and §2 shows no
    default for it. A value sent is kept; the setting can be changed as any other."""

    name = "userTokenExpirySeconds defaults to 3600"
    DEFAULT = 3600

    def publish(self, document):
        for name in ("CreatePartner",):
            prop = request_schema(document, name).get("properties", {}).get("userTokenExpirySeconds")
            if isinstance(prop, dict):
                prop["default"] = self.DEFAULT
                prop["description"] = "validity of the partner's user tokens in seconds; 3600 when not sent"
        prop = schema_of(document, "Partner").get("properties", {}).get("userTokenExpirySeconds")
        if isinstance(prop, dict):
            prop["default"] = self.DEFAULT
        return document

    def request(self, operation, environ, body):
        if operation == "CreatePartner" and isinstance(body, dict) and "userTokenExpirySeconds" not in body:
            return {**body, "userTokenExpirySeconds": self.DEFAULT}
        return body


# -- 5. mapped fields are left out unless asked for ---------------------------------------------------------------
class MappedFieldsExcludedByDefault(Variant):
    """excludeMappedFields defaults to true: a transaction's `fields` list leaves out the fields mapped to fixed
    transaction fields (orderNumber, bookingText, ...) unless the client sends excludeMappedFields=false. Spec §4.3
    names the parameter and what true does, not its default."""

    name = "excludeMappedFields defaults to true"

    def publish(self, document):
        for name in TRANSACTION_READS:
            for parameter in operation_object(document, name).get("parameters", []):
                if parameter.get("in") == "query" and parameter.get("name") == "excludeMappedFields":
                    schema = parameter.setdefault("schema", {})
                    schema["default"] = True
                    schema["description"] = ("drop fields mapped to fixed transaction fields; true unless "
                                             "false is sent")
        return document

    def request(self, operation, environ, body):
        if operation in TRANSACTION_READS:
            query = query_of(environ)
            if "excludeMappedFields" not in dict(query):
                environ["QUERY_STRING"] = urlencode(query + [("excludeMappedFields", "true")])
        return body


# -- 6. account answers carry no credentials ---------------------------------------------------------------------
ACCOUNT_ANSWERS = ("CreateAccount", "UpdateAccount", "GetAccount", "GetAccounts")


def without_credentials(value):
    if isinstance(value, dict):
        return {k: without_credentials(v) for k, v in value.items() if k != "credentials"}
    if isinstance(value, list):
        return [without_credentials(v) for v in value]
    return value


class CredentialsNotReturned(Variant):
    """An account's credentials are write-only: no account answer (create, update, read, list) and no notification
    (nor the test-event answers echoing one) carries a `credentials` member, not even the values that are not
    secret. Spec §2: the account record's fields
    beyond errors, warnings, warningDetails and statistics are not shown."""

    name = "account credentials never returned"

    def __init__(self, app):
        super().__init__(app)
        app.extensions["ptas"].hooks.notification.append(lambda store, world, body: without_credentials(body))

    def publish(self, document):
        for name in ("Account", "AccountChanged"):
            schema = schema_of(document, name)
            drop_property(schema, "credentials")
        for name in ("CreateAccount", "UpdateAccount"):
            prop = request_schema(document, name).get("properties", {}).get("credentials")
            if isinstance(prop, dict):
                prop["writeOnly"] = True
        return document

    def response(self, operation, environ, status, headers, data):
        body = json_of(data)
        echoed = environ["PATH_INFO"].startswith(SERVICE + "/testevents/")      # the notification as sent
        if (operation not in ACCOUNT_ANSWERS and not echoed) or not status.startswith("2") \
                or not isinstance(body, (dict, list)):
            return status, headers, data
        return status, headers, json.dumps(without_credentials(body)).encode()


BLIND = [Updates204, CreateAccountAccepted, WebhookSecretOnce, HourLongUserTokens, MappedFieldsExcludedByDefault,
         CredentialsNotReturned]
