"""A profile file is served only when it is one this version reads: anything else is one line and exit 2, never a
traceback at start-up or at the first request; and no profile reaches the sandbox's own control API."""

import json

import pytest

from ptas_sandbox import profile as profiles
from ptas_sandbox.cli import main as ptas
from ptas_sandbox.cli import serve as serve_command
from ptas_sandbox.simulator import create_app


def simulator(**config):
    return create_app({"STATE": ":memory:", "START_SERVICES": False, **config})


def profile_with(**choices):
    made = profiles.new("https://staging.example")
    made["choices"] = {name: {"value": value, "says": name, "evidence": []} for name, value in choices.items()}
    return made


def refused_by_serve(tmp_path, capsys, text, monkeypatch):
    path = tmp_path / "profile.json"
    path.write_text(text)

    def served(*args):
        raise AssertionError("the profile was accepted and the sandbox started")
    monkeypatch.setattr(serve_command, "start", served)       # a profile let through must fail, not serve for ever
    with pytest.raises(SystemExit) as exit:
        ptas(["serve", "--state", ":memory:", "--port", "0", "--profile", str(path)])
    err = capsys.readouterr().err
    assert exit.value.code == 2 and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    return err


@pytest.mark.parametrize("choices, words", [
    ({"ids": "uuid"}, "choices/ids/value"),                                    # a value of the wrong type
    ({"operations": {"CreateUser": {"method": "POST"}}}, "'path' is a required property"),
    ({"operations": {"CreateUser": {"method": "FETCH", "path": "/users"}}}, "choices/operations/value/CreateUser"),
    ({"createStatus": {"CreateUser": "201"}}, "choices/createStatus/value/CreateUser"),
    ({"paging": {"pageSize": 0}}, "choices/paging/value/pageSize"),
    ({"lists": {"GetUsers": {"shape": "table"}}}, "choices/lists/value/GetUsers/shape"),
])
def test_a_mistyped_choice_is_refused_in_one_line_naming_where(tmp_path, capsys, choices, words, monkeypatch):
    err = refused_by_serve(tmp_path, capsys, json.dumps(profile_with(**choices)), monkeypatch)
    assert words in err
    with pytest.raises(profiles.ProfileError):
        simulator(PROFILE=profile_with(**choices))


def test_a_deeply_nested_file_is_refused_in_one_line(tmp_path, capsys, monkeypatch):
    err = refused_by_serve(tmp_path, capsys, "[" * 100_000 + "]" * 100_000, monkeypatch)
    assert "nested too deeply" in err


def test_a_nested_value_where_a_name_belongs_is_refused_in_one_line(tmp_path, capsys, monkeypatch):
    deep = '{"x": ' * 200 + "{}" + "}" * 200
    text = json.dumps(profile_with()).replace(
        '"choices": {}', '"choices": {"records": {"value": {"GetUser": {"User": {"name": ' + deep + '}}}}}')
    err = refused_by_serve(tmp_path, capsys, text, monkeypatch)
    assert "choices/records/value/GetUser/User/name" in err


def test_no_operation_can_be_placed_on_the_control_api(tmp_path, capsys, monkeypatch):
    moved = profile_with(operations={"CreateUser": {"method": "POST", "path": "/_sandbox/reset"}})
    err = refused_by_serve(tmp_path, capsys, json.dumps(moved), monkeypatch)
    assert "/_sandbox" in err and "CreateUser" in err
    with pytest.raises(profiles.ProfileError):
        simulator(PROFILE=moved)


def test_the_control_api_answers_as_always_under_a_profile_that_names_its_operations():
    """A profile naming a control operation (a learner's slip, or a hand edit) moves nothing: health still
    answers without a token, and the partner path it named still creates users."""
    app = simulator(PROFILE=profile_with(operations={
        "SandboxHealth": {"method": "POST", "path": "/partner/v2/users"},
        "CreateUser": {"method": "POST", "path": "/partner/v2/users"}}))
    client = app.test_client()
    try:
        assert client.get("/_sandbox/health").status_code == 200
        token = client.post("/_sandbox/partners", json={"name": "Acme"}).json["accessToken"]
        created = client.post("/partner/v2/users", json={"name": "Jane"}, headers={"Authorization": f"Bearer {token}"})
        assert created.status_code == 201 and created.json["id"]
    finally:
        app.extensions["ptas"].close()
