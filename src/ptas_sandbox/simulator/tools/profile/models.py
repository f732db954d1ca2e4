"""The numbers a profiled simulator shows for its ids where the deployment numbers its records: per world, per
kind of record, 1, 2, 3... in the order the partner first sees them. Kept in the store, so a number means the
same record after a restart and in every process; a world's reset or deletion takes its numbers with it. No
Flask here."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS profile_ids (
    world TEXT NOT NULL,
    kind TEXT NOT NULL,
    number INTEGER NOT NULL,
    uuid TEXT NOT NULL,
    PRIMARY KEY (world, kind, number)
);
CREATE UNIQUE INDEX IF NOT EXISTS profile_ids_by_uuid ON profile_ids (world, kind, uuid);
CREATE INDEX IF NOT EXISTS profile_ids_world_of ON profile_ids (uuid);
"""


def numbers_of(store, world, kind, uuids):
    """{uuid: its number} for each of `uuids`, numbering those seen for the first time after the kind's last."""
    found, wanted = {}, sorted(set(uuids))
    with store.reading():       # most answers name records shown before: no write, no writer's turn
        for start in range(0, len(wanted), 500):
            part = wanted[start:start + 500]
            for row in store.all("SELECT uuid, number FROM profile_ids WHERE world = ? AND kind = ? AND uuid IN "
                                 f"({', '.join('?' * len(part))})", (world, kind, *part)):
                found[row["uuid"]] = row["number"]
    if len(found) == len(wanted):
        return found
    with store.transaction():
        store.lock(f"profile-ids:{world}")
        last = store.one("SELECT COALESCE(MAX(number), 0) AS n FROM profile_ids WHERE world = ? AND kind = ?",
                         (world, kind))["n"]
        for value in uuids:         # in the answer's order; a number once given never changes
            if value in found:
                continue
            row = store.one("SELECT number FROM profile_ids WHERE world = ? AND kind = ? AND uuid = ?",
                            (world, kind, value))       # numbered by another process since the read above
            if row is None:
                last += 1
                store.insert("profile_ids", world=world, kind=kind, number=last, uuid=value)
                row = {"number": last}
            found[value] = row["number"]
    return found


def uuid_of(store, world, kind, number):
    """The record a number stands for in a world, or None where it never stood for one."""
    with store.reading():
        row = store.one("SELECT uuid FROM profile_ids WHERE world = ? AND kind = ? AND number = ?",
                        (world, kind, number))
    return row["uuid"] if row else None


def world_of(store, uuids):
    """The world of records shown before, for an answer that names no world itself (a hosted page's redirect)."""
    with store.reading():
        for value in uuids:
            row = store.one("SELECT world FROM profile_ids WHERE uuid = ?", (value,))
            if row:
                return row["world"]
    return None
