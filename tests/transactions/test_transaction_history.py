"""Spec §9 version-history rows that state a behaviour the area tests left implicit: createdAt replaced the
transaction's CreationTimestamp (2.0.0-beta1); bookingDate and valueDate left the transaction fields (2.5.0);
GetTransaction carries TransactionType too (2.12.1)."""

from tests.support.accounts import imported, long_lived_user

REMOVED_FIELDS = {"bookingDate", "valueDate"}


def test_transactions_carry_created_at_and_not_creation_timestamp(world):
    _, jane = long_lived_user(world)
    account = imported(world.api, jane)
    listed = jane.get(f"/accounts/{account['id']}/transactions?pageSize=50").json["transactions"]
    one = jane.get(f"/accounts/{account['id']}/transactions/{listed[0]['id']}").json
    for transaction in listed + [one]:
        assert transaction["createdAt"] and "CreationTimestamp" not in transaction
        assert transaction["transactionType"]


def test_booking_date_and_value_date_are_no_transaction_fields(world):
    _, jane = long_lived_user(world)
    for account_type in world.api.get("/accounttypes").json["accountTypes"]:
        assert not REMOVED_FIELDS & {f["name"] for f in account_type["transactionFields"]}, account_type["id"]
    account = imported(world.api, jane)
    listed = jane.get(f"/accounts/{account['id']}/transactions?pageSize=200").json["transactions"]
    assert listed
    for transaction in listed:
        assert not REMOVED_FIELDS & ({f["name"] for f in transaction["fields"]} | set(transaction))
