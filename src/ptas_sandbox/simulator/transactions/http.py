"""HTTP layer of the transactions: GetTransactions (keyset pages), GetTransaction and the deprecated old form."""

from ..hooks import PAGE_ORDER
from ..operations import ANY_TOKEN, component, operation
from ..providers.models import CLASSIFICATIONS
from ..users import models as users
from . import models

TRANSACTION = component("Transaction", {
    "type": "object",
    "properties": {
        "id": {"type": "string"}, "accountId": {"type": "string"},
        "createdAt": {"type": "string", "format": "date-time"}, "orderNumber": {"type": ["string", "null"]},
        "bookingText": {"type": ["string", "null"]}, "amount": {"type": "number"}, "currency": {"type": "string"},
        "classification": {"type": "string", "description": "PaymentClassification",
                           "enum": [c for c, _ in CLASSIFICATIONS]},
        "transactionType": {"type": "object", "properties": {"code": {"type": "string"},
                                                             "name": {"type": "string"}}},
        "shopper": {"type": ["object", "null"], "properties": {
            "name": {"type": "string"}, "email": {"type": "string"}, "country": {"type": "string"}}},
        "reportId": {"type": ["string", "null"]},
        "fields": {"type": "array", "items": {"type": "object", "properties": {
            "name": {"type": "string"}, "value": {}, "isDeprecated": {"type": "boolean"},
            "deprecationReason": {"type": ["string", "null"]}, "isMapped": {"type": "boolean"},
            "mappedTo": {"type": ["string", "null"]}}}}},
    "required": ["id", "createdAt", "orderNumber", "bookingText", "classification", "transactionType", "fields"]})
component("TransactionPage", {"type": "object", "properties": {
    "transactions": {"type": "array", "items": TRANSACTION},
    "previousPageReference": {"type": ["string", "null"]}, "nextPageReference": {"type": ["string", "null"]}},
    "required": ["transactions", "previousPageReference", "nextPageReference"]})
EXCLUDES = {
    "excludeDeprecatedFields": {"type": "boolean", "description": "drop deprecated fields from `fields`"},
    "excludeMappedFields": {"type": "boolean", "description": "drop fields mapped to fixed transaction fields"}}
PAGING = {
    "pageReference": {"type": "string", "description": "previousPageReference or nextPageReference of a page, "
                                                       "sent with the same search parameters"},
    "pageSize": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "sandbox extension; default 100"}}


def page_of(call, account, **search):
    q = call.query
    newest = call.request.environ.get(PAGE_ORDER) == "newest first"     # a profiled deployment's order (hooks.py)
    found = models.page(call.ctx, account, reference=q.get("pageReference"),
                        size=q.get("pageSize", models.DEFAULT_PAGE), newest=newest, **search)
    return {"transactions": models.render(call.ctx, account, found["rows"], q.get("excludeDeprecatedFields"),
                                          q.get("excludeMappedFields")),
            "previousPageReference": found["previousPageReference"],
            "nextPageReference": found["nextPageReference"]}


def account_of(call, account_id):
    """The account whose transactions are asked for, if the caller may see it (404 otherwise)."""
    return users.get_owned_row(call.ctx, call.principal, "accounts", account_id, "account")


@operation("GetTransactions", "GET", "/accounts/{id}/transactions", tokens=ANY_TOKEN, scopes=("transaction:read",),
           query={**PAGING, "createdAt": {"type": "string", "format": "date-time",
                                          "description": "only transactions created at or after this instant"},
                  "reportId": {"type": "string", "description": "only the transactions of this report"},
                  **EXCLUDES}, responses={200: "TransactionPage"})
def get_transactions(call):
    """The transactions delivered so far, oldest first, one page at a time."""
    account = account_of(call, call.params["id"])
    return page_of(call, account, created_at=call.query.get("createdAt"), report_id=call.query.get("reportId"))


@operation("GetTransaction", "GET", "/accounts/{id}/transactions/{transactionId}", tokens=ANY_TOKEN,
           scopes=("transaction:read",), query=EXCLUDES, responses={200: "Transaction"})
def get_transaction(call):
    """One transaction of an account."""
    account = account_of(call, call.params["id"])
    row = models.get_owned(call.ctx, account, call.params["transactionId"])
    return models.render(call.ctx, account, [row], call.query.get("excludeDeprecatedFields"),
                         call.query.get("excludeMappedFields"))[0]


@operation("GetTransactionsDeprecated", "GET", "/transactions/{accountId}", tokens=ANY_TOKEN,
           scopes=("transaction:read",), deprecated=True, query=PAGING, responses={200: "TransactionPage"},
           summary="Deprecated: the old form of GetTransactions, without searches or exclude flags; do not use "
                   "it for new work.")
def get_transactions_deprecated(call):
    return page_of(call, account_of(call, call.params["accountId"]))
