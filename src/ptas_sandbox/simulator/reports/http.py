"""HTTP layer of the reports: an account's settlement reports and one report by id."""

from ..operations import ANY_TOKEN, component, operation
from ..users import models as users
from . import models

REPORT = component("Report", {
    "type": "object",
    "properties": {"id": {"type": "string"}, "accountId": {"type": "string"}, "userId": {"type": "string"},
                   "name": {"type": "string"}, "periodStart": {"type": "string", "format": "date-time"},
                   "periodEnd": {"type": "string", "format": "date-time"},
                   "createdAt": {"type": "string", "format": "date-time"}, "dataImportId": {"type": "string"},
                   "transactionCount": {"type": "integer"},
                   "errors": {"type": "array", "items": {"$ref": "#/components/schemas/StatusMessage"}},
                   "warnings": {"type": "array", "items": {"$ref": "#/components/schemas/StatusMessage"}}},
    "required": ["id", "accountId", "periodStart", "periodEnd", "createdAt", "transactionCount", "errors",
                 "warnings"]})
component("ReportList", {"type": "object", "properties": {"reports": {"type": "array", "items": REPORT}},
                         "required": ["reports"]})


@operation("GetReports", "GET", "/accounts/{id}/reports", tokens=ANY_TOKEN, scopes=("transaction:read",),
           responses={200: "ReportList"})
def get_reports(call):
    """The settlement reports of an account (types with hasPspReports), oldest first."""
    account = users.get_owned_row(call.ctx, call.principal, "accounts", call.params["id"], "account")
    return {"reports": [models.record(r) for r in models.of_account(call.ctx, account)]}


@operation("GetReport", "GET", "/reports/{id}", tokens=ANY_TOKEN, scopes=("transaction:read",),
           responses={200: "Report"})
def get_report(call):
    """One report; its transactions are found with GetTransactions' reportId search."""
    return models.record(models.get_owned(call.ctx, call.principal, call.params["id"]))
