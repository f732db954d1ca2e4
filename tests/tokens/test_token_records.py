"""Spec §2 statements the area tests left implicit: the token record's times, the token list's one field, the
account statistics' first and last dates, and the partner's redirectUrls replacing the single redirectUrl."""

from ptas_sandbox.simulator.timestamps import SECOND_US, parse
from tests.support.accounts import all_pages, imported, long_lived_user


def lifetime(record):
    return (parse(record["expiresAt"]) - parse(record["createdAt"])) / SECOND_US


def test_expires_at_is_created_at_plus_expires_in_for_every_kind_of_token(world):
    own = world.api.post("/partners/self/tokens", json={"scope": "partner:read", "expiresIn": 7200}).json
    child = world.api.post("/partners", json={"name": "Store 7"}).json
    child_token = world.api.post(f"/partners/{child['id']}/tokens", json={}).json
    user, _ = world.user(name="Jane")
    for record in (own, child_token, user["token"]):
        assert lifetime(record) == record["expiresIn"], record


def test_a_token_list_response_is_an_object_with_the_one_field_tokens(world):
    child = world.api.post("/partners", json={"name": "Store 7"}).json
    world.api.post(f"/partners/{child['id']}/tokens", json={"name": "till"})
    for path in ("/partners/self/tokens", f"/partners/{child['id']}/tokens"):
        body = world.api.get(path).json
        assert set(body) == {"tokens"} and isinstance(body["tokens"], list) and body["tokens"], (path, body)
        assert all("accessToken" not in record for record in body["tokens"])


def test_statistics_first_and_last_are_the_dates_of_the_first_and_last_transaction(world):
    _, jane = long_lived_user(world)
    account = imported(world.api, jane)
    transactions, _ = all_pages(jane, account["id"])
    statistics = jane.get(f"/accounts/{account['id']}").json["statistics"]
    created = sorted(t["createdAt"] for t in transactions)
    assert statistics == {"count": len(transactions), "first": created[0], "last": created[-1]}


def test_statistics_tell_that_new_transactions_exist(world):
    _, jane = long_lived_user(world)
    account = imported(world.api, jane)
    before = jane.get(f"/accounts/{account['id']}").json["statistics"]
    world.api.advance(2 * 3600)                                     # the hourly polls bring new transactions
    after = jane.get(f"/accounts/{account['id']}").json["statistics"]
    assert after["count"] > before["count"] and after["last"] > before["last"] and after["first"] == before["first"]


def test_the_partner_has_redirect_urls_and_no_longer_a_single_redirect_url(world):
    updated = world.api.put("/partners/self", json={"redirectUrls": ["https://a.example/done",
                                                                     "https://b.example/done"]})
    assert updated.status_code == 200, updated.json
    settings = world.api.get("/partners/self").json
    assert settings["redirectUrls"] == ["https://a.example/done", "https://b.example/done"]
    assert "redirectUrl" not in settings
