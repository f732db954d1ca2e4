"""Webhook subscriptions (spec §4.2 webhook rows, §6; field names: docs/design.md): CRUD, validation, scopes."""

import re

import pytest

from tests.support.problems import assert_problem

ECHO = "http://localhost/_sandbox/echo/subs"
SEVEN_DIGITS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{7}Z$")


def create(api, **fields):
    body = {"callbackUrl": ECHO, "events": ["AccountCreated"], **fields}
    response = api.post("/webhooks", json=body)
    assert response.status_code == 201, response.json
    return response.json


def test_create_webhook_returns_the_subscription_with_a_generated_secret(world):
    hook = create(world.api, name="orders", events=["AccountCreated", "TransactionsImported"])
    assert hook["callbackUrl"] == ECHO and hook["name"] == "orders" and hook["isActive"] is True
    assert hook["events"] == ["AccountCreated", "TransactionsImported"]
    assert hook["secret"].startswith("whsec_")
    assert SEVEN_DIGITS.match(hook["createdAt"]) and SEVEN_DIGITS.match(hook["updatedAt"])


def test_get_webhooks_lists_only_the_callers_and_get_webhook_reads_one(world):
    first, second = create(world.api), create(world.api, name="second")
    listed = world.api.get("/webhooks").json["webhooks"]
    assert [h["id"] for h in listed] == [first["id"], second["id"]]
    assert world.api.get(f"/webhooks/{second['id']}").json == second


def test_retired_event_kinds_are_accepted(world):
    hook = create(world.api, events=["ReportImported", "TransactionsImportError", "AccountError"])
    assert hook["events"] == ["ReportImported", "TransactionsImportError", "AccountError"]


def test_duplicate_event_kinds_are_kept_once(world):
    assert create(world.api, events=["AccountCreated", "AccountCreated"])["events"] == ["AccountCreated"]


def test_a_given_secret_is_kept(world):
    assert create(world.api, secret="my-own-secret-of-enough-length")["secret"] == "my-own-secret-of-enough-length"


@pytest.mark.parametrize("url", ["ftp://example.com/hook", "/relative/hook", "example.com/hook", "http://",
                                 "http://exa mple.com/", "javascript:alert(1)", ""])
def test_callback_url_must_be_absolute_http_or_https(world, url):
    assert_problem(world.api.post("/webhooks", json={"callbackUrl": url, "events": ["AccountCreated"]}), 400)


def test_unknown_event_kinds_are_refused(world):
    body = assert_problem(world.api.post("/webhooks", json={"callbackUrl": ECHO, "events": ["AccountCreated",
                                                                                          "PaymentReceived"]}), 400)
    assert "PaymentReceived" in body["detail"] or "PaymentReceived" in str(body.get("errors"))


def test_an_empty_event_list_is_refused(world):
    assert_problem(world.api.post("/webhooks", json={"callbackUrl": ECHO, "events": []}), 400)


def test_callback_url_and_events_are_required(world):
    assert_problem(world.api.post("/webhooks", json={"callbackUrl": ECHO}), 400, "invalid-body")
    assert_problem(world.api.post("/webhooks", json={"events": ["AccountCreated"]}), 400, "invalid-body")


def test_a_short_secret_is_refused(world):
    assert_problem(world.api.post("/webhooks", json={"callbackUrl": ECHO, "events": ["AccountCreated"],
                                                     "secret": "short"}), 400)
    assert_problem(world.api.post("/webhooks", json={"callbackUrl": ECHO, "events": ["AccountCreated"],
                                                     "secret": "whsec_not base64!"}), 400)
    assert_problem(world.api.post("/webhooks", json={"callbackUrl": ECHO, "events": ["AccountCreated"],
                                                     "secret": "whsec_c2hvcnQ="}), 400)


def test_put_replaces_the_settings_and_keeps_the_secret(world):
    hook = create(world.api, name="old", isActive=False)
    world.api.advance(5)
    response = world.api.put(f"/webhooks/{hook['id']}", json={"callbackUrl": "https://example.com/new",
                                                               "events": ["AccountDeleted"]})
    assert response.status_code == 200, response.json
    updated = response.json
    assert updated["callbackUrl"] == "https://example.com/new" and updated["events"] == ["AccountDeleted"]
    assert updated["name"] is None and updated["isActive"] is True
    assert updated["secret"] == hook["secret"] and updated["createdAt"] == hook["createdAt"]
    assert updated["updatedAt"] > hook["updatedAt"]


def test_patch_changes_only_the_fields_given(world):
    hook = create(world.api, name="keep me")
    patched = world.api.patch(f"/webhooks/{hook['id']}", json={"isActive": False}).json
    assert patched["isActive"] is False
    assert {k: v for k, v in patched.items() if k not in ("isActive", "updatedAt")} == \
           {k: v for k, v in hook.items() if k not in ("isActive", "updatedAt")}


@pytest.mark.parametrize("field, value", [("isActive", "yes"), ("events", "AccountCreated"), ("callbackUrl", 42),
                                          ("name", 7), ("secret", ["x"])])
def test_patch_with_a_field_of_the_wrong_type_is_refused_and_changes_nothing(world, field, value):
    hook = create(world.api)
    assert_problem(world.api.patch(f"/webhooks/{hook['id']}", json={field: value}), 400, "invalid-body")
    assert world.api.get(f"/webhooks/{hook['id']}").json == hook


def test_patch_with_an_empty_body_is_refused(world):
    hook = create(world.api)
    assert_problem(world.api.patch(f"/webhooks/{hook['id']}", json={}), 400)


def test_delete_webhook_removes_it(world):
    hook = create(world.api)
    assert world.api.delete(f"/webhooks/{hook['id']}").status_code == 204
    assert_problem(world.api.get(f"/webhooks/{hook['id']}"), 404, "not-found")
    assert world.api.get("/webhooks").json["webhooks"] == []


@pytest.mark.parametrize("method", ["get", "put", "patch", "delete"])
def test_another_partners_webhook_is_not_found(world, other_world, method):
    hook = create(other_world.api)
    body = {"callbackUrl": ECHO, "events": ["AccountCreated"]} if method in ("put", "patch") else None
    response = getattr(world.api, method)(f"/webhooks/{hook['id']}", json=body)
    assert_problem(response, 404, "not-found")
    assert other_world.api.get(f"/webhooks/{hook['id']}").json == hook


def test_a_child_partner_does_not_see_its_parents_webhooks(world):
    create(world.api)
    child = world.api.post("/partners", json={"name": "Child", "email": "child@acme.example"})
    assert child.status_code == 201, child.json
    token = world.api.post(f"/partners/{child.json['id']}/tokens", json={"scope": "partner:all"}).json["accessToken"]
    assert world.api.as_(token).get("/webhooks").json == {"webhooks": []}


def test_reading_webhooks_needs_partner_read(world):
    create(world.api)
    assert world.api.as_(world.new_token("partner:read")).get("/webhooks").status_code == 200
    assert_problem(world.api.as_(world.new_token("partner:update")).get("/webhooks"), 403, "forbidden")


def test_writing_webhooks_needs_partner_update(world):
    reader = world.api.as_(world.new_token("partner:read"))
    assert_problem(reader.post("/webhooks", json={"callbackUrl": ECHO, "events": ["AccountCreated"]}), 403)
    writer = world.api.as_(world.new_token("partner:update"))
    assert writer.post("/webhooks", json={"callbackUrl": ECHO, "events": ["AccountCreated"]}).status_code == 201


def test_user_tokens_cannot_manage_webhooks(world):
    _, user = world.user(name="Jane")
    assert_problem(user.get("/webhooks"), 403, "forbidden")
    assert_problem(user.post("/testevents/accountcreated"), 403, "forbidden")


def test_webhook_operations_are_in_the_openapi_document(api):
    document = api.get("/openapi.json").json
    operation_ids = {op["operationId"] for item in document["paths"].values() for op in item.values()}
    assert {"CreateWebhook", "GetWebhooks", "GetWebhook", "UpdateWebhook", "PatchWebhook", "DeleteWebhook",
            "SendTestAccountTypeUpdated", "SendTestAccountCreated", "SendTestAccountUpdated",
            "SendTestAccountDeleted", "SendTestTransactionsImported"} <= operation_ids
    assert "/partner/v2/testevents/transactionsimported" in document["paths"]


def test_create_webhook_documents_the_notification_as_an_openapi_callback(api):
    create = api.get("/openapi.json").json["paths"]["/partner/v2/webhooks"]["post"]
    [callback] = create["callbacks"]["notification"].values()
    notification = callback["post"]
    assert notification["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Notification"}
    assert {p["name"] for p in notification["parameters"]} == {"webhook-id", "webhook-timestamp", "webhook-signature"}


def test_the_removed_test_paths_under_webhooks_are_gone(world):
    assert_problem(world.api.post("/webhooks/test-events"), 404)
