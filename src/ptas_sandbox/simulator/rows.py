"""The rows of the tables that travel between areas, as the store returns them (column name: value).

Each table is written only by the models module that declares it (its SCHEMA); these types say what a row of it
holds where another area reads one, so a reader sees the shape without the SQL. Instants (`*_at`) are
microseconds on the world clock; JSON columns are text. A row leaves the service only through its area's
`record(...)` (the resource of spec §2). tests/core/test_rows.py keeps these in step with the tables.
"""

from typing import TypedDict


class AccountRow(TypedDict):
    """An account (accounts table): written by accounts.models only."""
    seq: int
    id: str
    world: str
    partner_id: str
    user_id: str
    type_id: str
    name: str
    credentials: str
    auth: str | None
    options: str
    errors: str
    warnings: str
    created_at: int
    updated_at: int
    delivered: int
    reported_through: int | None
    next_import_at: int | None


class DataImportRow(TypedDict):
    """An import run (data_imports table)."""
    id: str
    world: str
    partner_id: str
    user_id: str
    account_id: str
    account_seq: int
    kind: str
    status: str
    started_at: int
    due_at: int
    finished_at: int | None
    from_at: int | None
    until_at: int
    transaction_count: int
    report_ids: str
    errors: str
    warnings: str


class ReportRow(TypedDict):
    """A settlement report of one day, drawn from its SettlementRow and the account's schedule."""
    id: str
    world: str
    partner_id: str
    user_id: str
    account_id: str
    account_seq: int
    day: int
    created_at: int
    data_import_id: str
    transaction_count: int
    errors: str
    warnings: str


class SettlementRow(TypedDict):
    """The days [first_day, end_day) one import settled, each in a report (reports table)."""
    world: str
    partner_id: str
    user_id: str
    account_id: str
    account_seq: int
    first_day: int
    end_day: int
    created_at: int
    data_import_id: str
    errors: str
    warnings: str


class PartnerRow(TypedDict):
    """A partner (partners table)."""
    id: str
    world: str
    parent_id: str | None
    name: str
    email: str | None
    redirect_urls: str
    user_token_expiry: int
    ui_settings: str
    created_at: int
    updated_at: int
    deleted_at: int | None
    created_by: str | None


class UserRow(TypedDict):
    """A user (users table)."""
    id: str
    world: str
    partner_id: str
    name: str
    email: str | None
    scope: str
    created_at: int
    updated_at: int
    deleted_at: int | None


class TokenRow(TypedDict):
    """A token (tokens table); its JWT is never stored."""
    id: str
    world: str
    partner_id: str
    user_id: str | None
    kind: str
    name: str | None
    scope: str
    created_at: int
    expires_in: int
    expires_at: int
    revoked_at: int | None
    last_used_at: int | None
    created_by: str | None
