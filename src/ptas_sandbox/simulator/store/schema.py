"""The tables of every area as one schema: statements, declared columns, and what an older state lacks."""

import functools

CORE_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def statements(schemas):
    for schema in (CORE_SCHEMA, *schemas):
        for statement in schema.split(";"):
            if statement.strip():
                yield statement.strip()


def _defaulted(definition):
    """Whether a column definition fills itself in old rows: nullable or with a DEFAULT, and not a key."""
    words = definition.upper()
    return ("NOT NULL" not in words or "DEFAULT" in words) and "PRIMARY KEY" not in words


class StaleState(RuntimeError):
    """A state file written by an older ptas-sandbox: a table lacks columns this version declares."""


def declared_columns(schemas):
    """{table: {column: its definition}} of every CREATE TABLE statement of the schemas (constraints left out)."""
    return {table: dict(columns) for table, columns in _declared(tuple(schemas)).items()}


@functools.lru_cache(maxsize=8)
def _declared(schemas):
    """Parsed once per process: every store opened (a test's, a worker's) checks the same schemas twice."""
    tables = {}
    for statement in statements(schemas):
        head, _, body = statement.partition("(")
        words = head.split()
        if [w.upper() for w in words[:2]] != ["CREATE", "TABLE"]:
            continue
        body = body[:body.rindex(")")]
        columns, depth, part = {}, 0, ""
        for char in body + ",":
            if char == "," and depth == 0:
                name = part.split()[0] if part.split() else ""
                if name and name.upper() not in ("PRIMARY", "UNIQUE", "FOREIGN", "CHECK", "CONSTRAINT"):
                    columns[name] = part.strip()
                part = ""
                continue
            depth += (char == "(") - (char == ")")
            part += char
        tables[words[-1]] = columns
    return tables
