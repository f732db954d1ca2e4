"""Forms no variant of this suite uses. Ids: each learned from one sample, shown for a simulator's UUID in the
same shape, and taken back to that UUID (tools/profile/ids.py). Page references: each learned from a first
page's next reference, and a link under the deployment's own parameter served and followed. The variants of
variants.py prove the whole loop for the forms they use."""

import uuid
from urllib.parse import parse_qsl, urlsplit

import pytest

from ptas_sandbox import profile as profiles
from ptas_sandbox.conformance.profile_learn import alphabet_of, id_form, reference_form
from ptas_sandbox.simulator import create_app
from ptas_sandbox.simulator.tools.profile.ids import MALFORMED, Ids

SAMPLES = [
    "usr_3f2b8c1d-9e4a-4b7c-8d2e-1a0b9c8d7e6f",      # a prefix before a UUID
    "usr_3f2b8c1d9e4a4b7c8d2e1a0b9c8d7e6f",          # ... before its 32 hex digits
    "3f2b8c1d9e4a4b7c8d2e1a0b9c8d7e6f",              # the hex digits alone
    "01HQ3K5ZP8G7W2XN4B6C9D0EFT",                    # a ULID: 26 upper-case base-32 characters
    "cus_NffrFeUfNV2Hib",                            # a short base-62 suffix: numbered
    "user-42",                                       # a prefix and a number
    "000042",                                        # zero-padded digits
    "42",                                            # a number
]


@pytest.fixture
def store(app):
    return app.extensions["ptas"].store


@pytest.mark.parametrize("sample", SAMPLES)
def test_an_id_form_is_shown_in_the_samples_shape_and_taken_back(store, sample):
    form = id_form(sample)
    if form.get("rest") == "string":
        form["alphabet"] = alphabet_of(sample[len(form["prefix"]):])
    assert form["form"] in ("prefixed", "integer"), form
    ids = Ids({"kinds": {"user": form}}, store)
    records = [str(uuid.UUID(int=n * 7919 + 12345)) for n in range(1, 4)]
    shown = ids.show("world-a", [("user", r) for r in records])
    for record in records:
        text = str(shown[("user", record)])
        assert text.startswith(form.get("prefix", "")) and text != record
        if form.get("length"):
            assert len(text) == len(sample), (text, sample)
        assert set(text[len(form.get("prefix", "")):]) <= set(sample[len(form.get("prefix", "")):]) | set(
            "0123456789abcdef" if form.get("alphabet") == "hex" else
            "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ" if form.get("alphabet") == "BASE36" else
            "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-"), text
        assert ids.back("world-a", "user", text) == record
    assert len({str(v) for v in shown.values()}) == 3
    assert ids.back("world-a", "user", "not an id!") is MALFORMED


def test_a_number_means_nothing_in_another_world(store):
    ids = Ids({"kinds": {"user": {"form": "integer", "json": "string"}}}, store)
    record = str(uuid.UUID(int=99))
    assert ids.show("world-c", [("user", record)])[("user", record)] == "1"
    assert ids.back("world-c", "user", "1") == record
    assert ids.back("world-d", "user", "1") not in (record, MALFORMED)     # a UUID no record has: not found


@pytest.mark.parametrize("reference, first, form", [
    ("25", True, {"referenceForm": "offset"}),
    ("2", True, {"referenceForm": "page", "firstPage": 1}),
    ("1", True, {"referenceForm": "page", "firstPage": 0}),
    ("2", False, {"referenceForm": "offset"}),           # after a later page a number says less
    ("eyJvZmZzZXQiOjI1fQ", True, {"referenceForm": "opaque"}),
    ("https://api.example/partner/v2/accounts/7/transactions?pageReference=abc", True,
     {"referenceForm": "opaque", "url": {"absolute": True, "parameter": "pageReference"}}),
    ("/partner/v2/accounts/7/transactions?createdAt=2026-01-01&page=2", True,
     {"referenceForm": "page", "firstPage": 1, "url": {"absolute": False, "parameter": "page"}}),
])
def test_a_page_reference_form_is_learned_from_a_first_pages_next_reference(reference, first, form):
    assert reference_form(reference, 25, first=first, sent={"createdAt": "2026-01-01"}) == form


def test_page_links_under_the_deployments_own_parameter_are_served_and_followed(apps_with_data):
    """Pages of 25 whose references are paths with a page number in `page`: the link followed as it is, or sent
    back as pageReference, gives the same page; previous leads back to the first."""
    client, auth, account = apps_with_data
    first = client.get(f"/partner/v2/accounts/{account}/transactions", headers=auth).json
    link = first["nextPageReference"]
    assert first["previousPageReference"] is None and len(first["transactions"]) == 25
    assert urlsplit(link).path == f"/partner/v2/accounts/{account}/transactions"
    assert dict(parse_qsl(urlsplit(link).query)) == {"page": "2"}
    followed = client.get(link, headers=auth).json
    sent_back = client.get(f"/partner/v2/accounts/{account}/transactions", headers=auth,
                           query_string={"pageReference": link}).json
    assert followed == sent_back and followed["transactions"] != first["transactions"]
    assert dict(parse_qsl(urlsplit(followed["previousPageReference"]).query)) == {"page": "1"}
    assert client.get(followed["previousPageReference"], headers=auth).json["transactions"] == first["transactions"]
    assert client.get(f"/partner/v2/accounts/{account}/transactions?page=9", headers=auth).status_code == 400


@pytest.fixture
def apps_with_data(store_location):
    from ptas_sandbox.conformance.steps.account_types import form_for

    profile = {"format": profiles.FORMAT, "version": profiles.VERSION, "target": "staging", "unknown": {},
               "choices": {"paging": {"value": {"pageSize": 25, "referenceForm": "page", "firstPage": 1,
                                                "url": {"absolute": False, "parameter": "page"}},
                                      "says": "pages of 25, numbered, in links", "evidence": []}}}
    app = create_app({"STATE": store_location, "START_SERVICES": False, "PROFILE": profile})
    client = app.test_client()
    auth = {"Authorization": "Bearer " + client.post("/_sandbox/partners", json={"name": "P"}).json["accessToken"]}
    user = client.post("/partner/v2/users", json={"name": "Ann"}, headers=auth).json["id"]
    dummy = client.get("/partner/v2/accounttypes/dummy", headers=auth).json
    account = client.post("/partner/v2/accounts", headers=auth, json={
        "accountTypeId": "dummy", "userId": user, "credentials": form_for(dummy)}).json["id"]
    client.post("/_sandbox/clock", headers=auth, json={"advance": 2 * 86400})
    yield client, auth, account
    app.extensions["ptas"].close()
