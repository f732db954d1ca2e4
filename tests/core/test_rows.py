"""The row types of simulator/rows.py name exactly the columns of their tables, so a reader can trust them."""

import typing

import pytest

from ptas_sandbox.simulator import create_app, rows

TABLES = {"accounts": rows.AccountRow, "data_imports": rows.DataImportRow, "reports": rows.SettlementRow,
          "partners": rows.PartnerRow, "users": rows.UserRow,
          "tokens": rows.TokenRow}


@pytest.mark.parametrize("table", sorted(TABLES))
def test_a_row_type_has_the_columns_of_its_table_and_their_nullability(table):
    # The declared schema (SQLite's words), whichever engine the suite runs on.
    app = create_app({"STATE": ":memory:", "START_SERVICES": False})
    store = app.extensions["ptas"].store
    columns = {c["name"]: c for c in store.all(f"PRAGMA table_info({table})")}
    hints = typing.get_type_hints(TABLES[table])
    assert set(hints) == set(columns)
    for name, column in columns.items():
        nullable = not column["notnull"] and not column["pk"]
        assert (type(None) in typing.get_args(hints[name])) == nullable, name
        base = {"TEXT": str, "INTEGER": int}[column["type"]]
        assert base is hints[name] or base in typing.get_args(hints[name]), name
