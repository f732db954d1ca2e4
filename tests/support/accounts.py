"""Helpers shared by the account, transaction, import and report tests: connect an account, read all pages."""

import base64

DUMMY_CREDENTIALS = {"username": "jane", "password": "s3cret"}
CERTIFICATE = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMIIB...\n-----END CERTIFICATE-----\n").decode()
CARD_CREDENTIALS = {"merchantId": "M-1001", "apiKey": "k-123", "certificate": CERTIFICATE}


def connect(user_api, type_id="dummy", credentials=None, **body):
    """Create an account of `type_id` as the user; returns its CreateAccount answer."""
    body = {"accountTypeId": type_id, "credentials": DUMMY_CREDENTIALS if credentials is None else credentials,
            **body}
    response = user_api.post("/accounts", json=body)
    assert response.status_code == 201, response.json
    return response.json


def imported(api, user_api, type_id="dummy", seconds=3600, **body):
    """An account whose first import has finished (the clock moved `seconds` on)."""
    account = connect(user_api, type_id, **body)
    api.advance(seconds)
    return account


def all_pages(user_api, account_id, query=""):
    """Every transaction by following nextPageReference; also returns how many pages it took."""
    transactions, pages, reference = [], 0, None
    while True:
        suffix = f"&pageReference={reference}" if reference else ""
        response = user_api.get(f"/accounts/{account_id}/transactions?pageSize=1000{query}{suffix}")
        assert response.status_code == 200, response.json
        transactions += response.json["transactions"]
        pages += 1
        reference = response.json["nextPageReference"]
        if reference is None:
            return transactions, pages


def long_lived_user(world, name="Jane", lifetime=365 * 86400):
    """A user whose token outlives the clock jumps of the test: `lifetime` seconds, a year by default for the
    import tests that jump months. A test the integration report judges asks only for what its jumps need (a
    user token far outliving its use is `lifetime-beyond-use`)."""
    response = world.api.put("/partners/self", json={"userTokenExpirySeconds": lifetime})
    assert response.status_code == 200, response.json
    return world.user(name=name)
