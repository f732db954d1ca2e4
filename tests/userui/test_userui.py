"""User UI sessions (spec §4.2 note 4): the partner opens one, a person registers on its page, GET tells."""

from urllib.parse import parse_qs, urlsplit

import pytest

from ptas_sandbox.simulator.userui import models
from tests.support.pages import form_token, post_form
from tests.support.problems import assert_problem


def open_session(world, **body):
    response = world.api.post("/userui", json=body)
    assert response.status_code == 201, response.json
    return response.json


def path(session):
    return urlsplit(session["url"]).path


def test_registering_on_the_page_completes_the_session_with_the_new_user(client, world):
    session = open_session(world)
    assert session["status"] == "Pending" and session["userId"] is None
    form = client.get(path(session))
    assert form.status_code == 200 and 'name="name"' in form.get_data(as_text=True)
    done = post_form(client, path(session), data={"name": "Jane's Bakery", "email": "jane@bakery.example"})
    assert done.status_code == 200 and "Registration complete" in done.get_data(as_text=True)
    read = world.api.get(f"/userui/{session['id']}").json
    assert read["status"] == "Completed" and read["userId"]
    user = world.api.get(f"/users/{read['userId']}").json
    assert (user["name"], user["email"]) == ("Jane's Bakery", "jane@bakery.example")


def test_with_a_redirect_url_the_page_returns_the_person_to_the_partner(client, world):
    session = open_session(world, redirectUrl="https://app.example/registered?x=1")
    response = post_form(client, path(session), data={"name": "Jane"})
    assert response.status_code == 302
    query = parse_qs(urlsplit(response.headers["Location"]).query)
    assert query["x"] == ["1"] and query["sessionId"] == [session["id"]] and query["status"] == ["Completed"]
    assert query["userId"] == [world.api.get(f"/userui/{session['id']}").json["userId"]]


def test_a_completed_session_cannot_register_again(client, world):
    session = open_session(world)
    post_form(client, path(session), data={"name": "Jane"})
    assert post_form(client, path(session), data={"name": "Again"}).status_code == 409
    assert client.get(path(session)).status_code == 409
    assert len(world.api.get("/users").json["users"]) == 1


def test_an_expired_session_reads_expired_and_its_page_refuses(client, world):
    session = open_session(world)
    form_token(client, path(session))                   # the page was open before the session expired
    world.api.advance(models.SESSION_LIFETIME_US // 1_000_000)
    assert world.api.get(f"/userui/{session['id']}").json["status"] == "Expired"
    assert post_form(client, path(session), data={"name": "Jane"}).status_code == 409


@pytest.mark.parametrize("form", [{}, {"name": "   "}, {"name": "Jane", "email": "not-an-email"},
                                  {"name": "Jane", "isAdmin": "1"}, {"name": "x" * 201}])
def test_missing_or_forged_fields_are_a_400_page_and_register_nobody(client, world, form):
    session = open_session(world)
    response = post_form(client, path(session), data=form)
    assert response.status_code == 400 and response.mimetype == "text/html"
    assert world.api.get(f"/userui/{session['id']}").json["status"] == "Pending"
    assert world.api.get("/users").json["users"] == []


def test_what_the_person_typed_is_escaped_when_shown_again(client, world):
    session = open_session(world)
    html = post_form(client, path(session), data={"name": "<script>alert(1)</script>", "email": "<b>x"}).get_data(True)
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    done = post_form(client, path(open_session(world)), data={"name": "<script>alert(2)</script>"}).get_data(True)
    assert "<script>alert(2)" not in done and "&lt;script&gt;alert(2)" in done


def test_partner_styling_is_applied_and_unsafe_values_refused(client, world):
    look = {"uiSettings": {"styling": {"primaryColor": "#ff0066"}}}
    assert world.api.put("/partners/self", json=look).status_code == 200
    for unsafe in ({"backgroundColor": "red;}</style><script>alert(1)</script>"},
                   {"fontFamily": "url(https://evil.example/x)"}):
        assert_problem(world.api.put("/partners/self", json={"uiSettings": {"styling": unsafe}}), 400)
    html = client.get(path(open_session(world))).get_data(as_text=True)
    assert "--primary: #ff0066;" in html
    assert "evil.example" not in html and "alert(1)" not in html and "--background: red" not in html


def test_session_of_another_partner_is_not_found(world, other_world):
    session = open_session(world)
    assert_problem(other_world.api.get(f"/userui/{session['id']}"), 404)
    child = world.api.post("/partners", json={"name": "Child"}).json
    token = world.api.post(f"/partners/{child['id']}/tokens",
                           json={"scope": "userui:read", "expiresIn": 3600}).json["accessToken"]
    assert_problem(world.api.as_(token).get(f"/userui/{session['id']}"), 404)


def test_userui_calls_without_their_scope_are_forbidden(world):
    session = open_session(world)
    reader = world.api.as_(world.new_token("userui:read"))
    creator = world.api.as_(world.new_token("userui:create"))
    assert_problem(reader.post("/userui", json={}), 403)
    assert_problem(creator.get(f"/userui/{session['id']}"), 403)
    assert reader.get(f"/userui/{session['id']}").status_code == 200


def test_user_tokens_cannot_open_sessions(world):
    _, as_user = world.user()
    assert_problem(as_user.post("/userui", json={}), 403)


def test_redirect_url_must_be_absolute_http(world):
    assert_problem(world.api.post("/userui", json={"redirectUrl": "/relative"}), 400)


def test_unknown_page_key_is_a_404_page(client):
    response = client.get("/partner/v2/userui/pages/nope")
    assert response.status_code == 404 and response.mimetype == "text/html"


def test_error_pages_escape_what_was_posted(client, world):
    session = open_session(world)
    response = post_form(client, path(session), data={"name": "Jane", "<script>alert(3)</script>": "x"})
    html = response.get_data(as_text=True)
    assert response.status_code == 400 and 'id="error"' in html
    assert "<script>alert(3)" not in html and "&lt;script&gt;alert(3)&lt;/script&gt;" in html
