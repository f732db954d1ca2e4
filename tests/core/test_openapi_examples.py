"""What /openapi.json tells a newcomer holding only the world's partner token holds: add `userId`, and the
examples written for a user token work."""

from ptas_sandbox.simulator.operations import REGISTRY


def test_user_examples_work_with_a_partner_token_and_the_users_id(api, world):
    assert "with a partner token add the user's `userId`" in api.get("/openapi.json").json["info"]["description"]
    user, _ = world.user(scope="account:all transaction:all")
    user_id = user["id"]
    tried = []
    for op in REGISTRY.values():
        if op.example is None or "{" in op.path or op.consumes != "application/json" or op.control:
            continue
        if "userId" not in (op.body or {}).get("properties", {}) or "userId" in op.example:
            continue
        response = world.api.client.open("/partner/v2" + op.path, method=op.method,
                                         json={**op.example, "userId": user_id},
                                         headers={"Authorization": f"Bearer {world.token}"})
        assert response.status_code < 300, (op.id, response.get_data(as_text=True))
        tried.append(op.id)
    assert {"CreateAccount", "CreateOauthRedirectUrl", "CreateAccountUiSession"} <= set(tried)
