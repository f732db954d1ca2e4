"""The report's own table: what the journal cannot show and the edge saw (a partner token in a page URL),
kept bounded per world. The rules that judge it live in rules/."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS report_observations (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    world TEXT NOT NULL,
    rule TEXT NOT NULL,
    at INTEGER NOT NULL,
    operation TEXT,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    status INTEGER,
    detail TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS report_observations_by_world ON report_observations (world, seq);
"""

OBSERVATIONS_KEPT = 500         # per world


def observe(store, world, rule, at, method, path, detail, operation=None, status=None):
    """Something the journal cannot show (a token in a page URL), kept bounded."""
    store.insert("report_observations", world=world, rule=rule, at=at, operation=operation, method=method,
                 path=path, status=status, detail=detail)
    store.execute("DELETE FROM report_observations WHERE world = ? AND seq <= (SELECT seq FROM report_observations "
                  "WHERE world = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)", (world, world, OBSERVATIONS_KEPT))
