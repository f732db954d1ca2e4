"""What a profiled simulator must mean the same in every process and after a restart, kept in the store; a
world's reset or deletion takes it with it.

- The numbers it shows for ids where the deployment numbers its records: per world, per kind of record, 1, 2,
  3... in the order the partner first sees them.
- The page references it gives as offsets or page numbers, each standing for the simulator's own reference of
  that page (per world, list and position; the oldest of PAGES_KEPT a world holds go first)."""

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
CREATE TABLE IF NOT EXISTS profile_pages (
    world TEXT NOT NULL,
    list TEXT NOT NULL,
    position INTEGER NOT NULL,
    reference TEXT NOT NULL,
    given INTEGER NOT NULL,
    PRIMARY KEY (world, list, position)
);
CREATE INDEX IF NOT EXISTS profile_pages_by_age ON profile_pages (world, given);
"""
PAGES_KEPT = 4096


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


def remember_page(store, world, page_list, position, reference):
    """That `position` of a list (the simulator's path and query, and the form) stands for `reference`."""
    with store.transaction():
        store.lock(f"profile-pages:{world}")
        store.execute("DELETE FROM profile_pages WHERE world = ? AND list = ? AND position = ?",
                      (world, page_list, position))
        given = store.one("SELECT COALESCE(MAX(given), 0) + 1 AS n FROM profile_pages WHERE world = ?",
                          (world,))["n"]
        store.insert("profile_pages", world=world, list=page_list, position=position, reference=reference,
                     given=given)
        store.execute("DELETE FROM profile_pages WHERE world = ? AND given <= ?", (world, given - PAGES_KEPT))


def page_at(store, world, page_list, position):
    """The simulator's reference a position stands for, or None where none was given (or it was forgotten)."""
    with store.reading():
        row = store.one("SELECT reference FROM profile_pages WHERE world = ? AND list = ? AND position = ?",
                        (world, page_list, position))
    return row["reference"] if row else None
