"""Ids of forms no variant of this suite uses: each learned from one sample, shown for a simulator's UUID in the
same shape, and taken back to that UUID (tools/profile/ids.py; the variants prove the whole loop)."""

import uuid

import pytest

from ptas_sandbox.conformance.profile_learn import alphabet_of, id_form
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
