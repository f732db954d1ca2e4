"""A User UI session in a real browser: the person registers, the partner reads the new user."""


def test_registering_through_the_user_ui_page(page, remote):
    remote.put("/partners/self", json={"uiSettings": {"styling": {"primaryColor": "#008060"}}})
    session = remote.post("/userui", json={}).json()
    page.goto(session["url"])
    page.shots("form")
    assert page.eval_on_selector("#register", "b => getComputedStyle(b).backgroundColor") == "rgb(0, 128, 96)"
    page.click("#register")                                     # the browser refuses an empty required name
    assert remote.get(f"/userui/{session['id']}").json()["status"] == "Pending"
    page.fill("#name", "Jane's <b>Bakery</b>")
    page.fill("#email", "jane@bakery.example")
    page.click("#register")
    page.wait_for_selector("#result")
    page.shots("done")
    assert "Jane's <b>Bakery</b>" in page.text_content("#result")
    read = remote.get(f"/userui/{session['id']}").json()
    assert read["status"] == "Completed"
    user = remote.get(f"/users/{read['userId']}").json()
    assert (user["name"], user["email"]) == ("Jane's <b>Bakery</b>", "jane@bakery.example")
