"""The inspector's Report tab (issue 14): the world's findings with evidence, fixes and injected marks."""

from urllib.parse import urlsplit


def open_tab(client, world):
    minted = client.post("/_sandbox/inspect/links", headers={"Authorization": f"Bearer {world.token}"})
    target = urlsplit(minted.json["url"])
    client.get(f"{target.path}?{target.query}")
    response = client.get("/_sandbox/inspect/report")
    assert response.status_code == 200
    return response.get_data(as_text=True)


def test_a_clean_world_says_every_rule_passed(client, world):
    assert "No findings: every rule passed." in open_tab(client, world)


def test_findings_show_their_rule_evidence_fix_and_injected_marks(client, world):
    world.api.post("/_sandbox/faults", json={"effect": {"type": "status", "status": 503, "retryAfter": 30}})
    world.api.get("/users")
    world.api.get("/users")
    html = open_tab(client, world)
    assert 'id="rule-retry-after-ignored"' in html and 'id="rule-initial-token-in-use"' in html
    assert "Fix:" in html and ">injected<" in html and "/partner/v2/users" in html


def test_the_tab_shows_only_its_own_world(client, world, other_world):
    other_world.api.get("/users")
    assert "No findings" in open_tab(client, world)


def test_evidence_without_a_request_shows_without_a_status(client, world):
    """The not-revoked finding's evidence is a token, not a call: no status to colour (was a 500 on the tab)."""
    world.new_token("partner:all", expires_in=365 * 86400)
    html = open_tab(client, world)
    assert 'id="rule-initial-token-not-revoked"' in html and world.body["token"]["id"] in html
