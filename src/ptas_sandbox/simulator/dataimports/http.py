"""HTTP layer of the data imports (spec §4.2): the import runs of the caller's accounts."""

from ..operations import ANY_TOKEN, component, operation, ref
from . import models

IMPORT = component("DataImport", {
    "type": "object",
    "properties": {"id": {"type": "string"}, "accountId": {"type": "string"}, "userId": {"type": "string"},
                   "kind": {"type": "string", "enum": list(models.KINDS)},
                   "status": {"type": "string", "enum": list(models.STATUSES)},
                   "startedAt": {"type": "string", "format": "date-time"},
                   "finishedAt": {"type": ["string", "null"], "format": "date-time"},
                   "from": {"type": ["string", "null"], "format": "date-time"},
                   "until": {"type": "string", "format": "date-time"},
                   "transactionCount": {"type": "integer"},
                   "reportIds": {"type": "array", "items": {"type": "string"}},
                   "errors": {"type": "array", "items": ref("StatusMessage")},
                   "warnings": {"type": "array", "items": ref("StatusMessage")}},
    "required": ["id", "accountId", "status", "startedAt", "transactionCount", "errors", "warnings"]})
component("DataImportList", {"type": "object", "properties": {"dataImports": {"type": "array", "items": IMPORT}},
                             "required": ["dataImports"]})


@operation("GetDataImports", "GET", "/dataimports", tokens=ANY_TOKEN, scopes=("account:read",),
           query={"accountId": {"type": "string"}, "userId": {"type": "string"}}, responses={200: "DataImportList"})
def get_data_imports(call):
    """The import runs of the caller's accounts, oldest first; filter by account or (partner) user."""
    rows = models.search(call.ctx, call.principal, call.query.get("accountId"), call.query.get("userId"))
    return {"dataImports": [models.record(r) for r in rows]}


@operation("GetDataImport", "GET", "/dataimports/{id}", tokens=ANY_TOKEN, scopes=("account:read",),
           responses={200: "DataImport"})
def get_data_import(call):
    """One import run with its range, transaction count, errors and warnings."""
    return models.record(models.get_owned(call.ctx, call.principal, call.params["id"]))
