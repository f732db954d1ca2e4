"""The receiver-side helper ptas_sandbox.webhooks: what a partner's receiver accepts and what it refuses."""

import base64
import hashlib
import hmac
import json

import pytest

from ptas_sandbox.webhooks import InvalidSignature, sign, verify

SECRET = "whsec_" + base64.b64encode(b"0123456789abcdef0123").decode()
BODY = json.dumps({"id": "evt-1", "eventType": "AccountCreated", "data": {}})
NOW = 1_767_603_600


def headers(body=BODY, stamp=NOW, secret=SECRET, message_id="evt-1"):
    return {"webhook-id": message_id, "webhook-timestamp": str(stamp),
            "webhook-signature": sign(secret, message_id, stamp, body)}


def test_the_signature_is_standard_webhooks_hmac_sha256():
    expected = hmac.new(b"0123456789abcdef0123", f"evt-1.{NOW}.{BODY}".encode(), hashlib.sha256).digest()
    assert sign(SECRET, "evt-1", NOW, BODY) == "v1," + base64.b64encode(expected).decode()


def test_an_authentic_notification_is_accepted_and_parsed():
    assert verify(SECRET, headers(), BODY.encode(), now=NOW + 10)["eventType"] == "AccountCreated"


def test_header_names_are_case_insensitive():
    assert verify(SECRET, {k.title(): v for k, v in headers().items()}, BODY, now=NOW)


def test_a_plain_text_secret_signs_with_its_bytes():
    assert verify("plain-secret-text-16", headers(secret="plain-secret-text-16"), BODY, now=NOW)


@pytest.mark.parametrize("change", ["body", "secret", "id", "timestamp"])
def test_any_change_breaks_the_signature(change):
    given = headers()
    body = BODY.replace("evt-1", "evt-2") if change == "body" else BODY
    secret = "whsec_" + base64.b64encode(b"another key of 20 bytes").decode() if change == "secret" else SECRET
    if change == "id":
        given["webhook-id"] = "evt-2"
    if change == "timestamp":
        given["webhook-timestamp"] = str(NOW + 1)
    with pytest.raises(InvalidSignature, match="signature"):
        verify(secret, given, body, now=NOW)


def test_an_old_or_future_timestamp_is_refused_unless_tolerance_is_off():
    with pytest.raises(InvalidSignature, match="tolerance"):
        verify(SECRET, headers(), BODY, now=NOW + 301)
    with pytest.raises(InvalidSignature, match="tolerance"):
        verify(SECRET, headers(), BODY, now=NOW - 301)
    assert verify(SECRET, headers(), BODY, tolerance_seconds=None)


def test_one_matching_signature_among_several_is_enough():
    given = headers()
    given["webhook-signature"] = "v1,AAAA " + given["webhook-signature"]
    assert verify(SECRET, given, BODY, now=NOW)


@pytest.mark.parametrize("missing", ["webhook-id", "webhook-timestamp", "webhook-signature"])
def test_a_missing_header_is_refused_by_name(missing):
    given = headers()
    del given[missing]
    with pytest.raises(InvalidSignature, match=missing):
        verify(SECRET, given, BODY, now=NOW)


def test_a_timestamp_that_is_not_a_number_is_refused():
    given = headers()
    given["webhook-timestamp"] = "yesterday"
    with pytest.raises(InvalidSignature, match="Unix seconds"):
        verify(SECRET, given, BODY, now=NOW)


@pytest.mark.parametrize("signature", ["v1,é", "v1,€€€€", "v1,\ud800", "v1,AAAA v1,é"])
def test_a_signature_of_any_characters_is_refused_as_a_wrong_one(signature):
    given = {**headers(), "webhook-signature": signature}
    with pytest.raises(InvalidSignature, match="No v1 signature matches"):
        verify(SECRET, given, BODY, now=NOW)
    given["webhook-signature"] = signature + " " + headers()["webhook-signature"]
    assert verify(SECRET, given, BODY, now=NOW), "a good one after it still counts"


def test_an_id_or_body_no_sender_could_sign_is_refused_as_not_authentic():
    """A receiver sees only InvalidSignature for what it was sent, whatever the sender wrote."""
    with pytest.raises(InvalidSignature, match="cannot be signed|not text"):
        verify(SECRET, {**headers(), "webhook-id": "evt-\ud800"}, BODY, now=NOW)
    with pytest.raises(InvalidSignature, match="not text"):
        verify(SECRET, headers(), BODY + "\ud800", now=NOW)
    with pytest.raises(InvalidSignature, match="not a JSON notification"):
        verify(SECRET, headers(body="signed, but no JSON"), "signed, but no JSON", now=NOW)
