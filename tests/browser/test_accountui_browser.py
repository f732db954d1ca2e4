"""Account UI sessions in a real browser: a dummy account from typed credentials, a dummy-auth account
through the provider's consent page and back."""


def open_session(remote, user, **body):
    response = remote.post("/accountui", json={"userId": user["id"], **body})
    assert response.status_code == 201, response.text
    return response.json()


def test_creating_a_dummy_account_on_the_account_ui_page(page, remote, user):
    session = open_session(remote, user, accountTypeIds=["dummy", "dummy-auth"])
    page.goto(session["url"])
    page.shots("choose-type")
    page.click("a[data-type=dummy]")
    page.wait_for_selector("#f-username")
    page.shots("form")
    assert page.get_attribute("#f-password", "type") == "password"
    page.fill("#f-username", "jane")
    page.click("#submit")                                          # the browser holds back a missing password
    assert remote.get(f"/accountui/{session['id']}").json()["status"] == "Pending"
    page.fill("#f-password", "secret")
    page.click("#submit")
    page.wait_for_selector("#result")
    page.shots("done")
    assert page.get_attribute("#result", "data-status") == "Completed"
    read = remote.get(f"/accountui/{session['id']}").json()
    assert read["status"] == "Completed"
    account = remote.get(f"/accounts/{read['accountId']}").json()
    assert account["accountTypeId"] == "dummy" and account["userId"] == user["id"]


def test_creating_a_dummy_auth_account_through_the_provider(page, live, remote, user):
    session = open_session(remote, user, accountTypeIds=["dummy-auth"],
                           redirectUrl=f"{live}/_sandbox/health?from=accountui")
    page.goto(session["url"])
    page.shots("form")
    page.click("#connect")
    page.wait_for_selector("#approve")
    page.shots("consent")
    page.click("#approve")
    page.wait_for_selector("#auth-connected")
    page.shots("authorized")
    page.fill("#f-shopName", "Jane's <shop>")
    page.click("#submit")
    page.wait_for_url(f"{live}/_sandbox/health?**")
    page.shots("returned")
    read = remote.get(f"/accountui/{session['id']}").json()
    assert read["status"] == "Completed" and f"accountId={read['accountId']}" in page.url
    account = remote.get(f"/accounts/{read['accountId']}").json()
    assert account["accountTypeId"] == "dummy-auth"


def test_a_denied_authorization_shows_the_error_and_allows_another_try(page, remote, user):
    session = open_session(remote, user, accountTypeIds=["dummy-auth"])
    page.goto(session["url"])
    page.click("#connect")
    page.click("#deny")
    page.wait_for_selector("#auth-error")
    page.shots("denied")
    assert "denied" in page.text_content("#auth-error")
    page.click("#connect")
    page.click("#approve")
    page.wait_for_selector("#auth-connected")
    page.click("#submit")
    page.wait_for_selector("#result")
    assert remote.get(f"/accountui/{session['id']}").json()["status"] == "Completed"


def test_uploading_a_certificate_on_the_account_ui_page(page, remote, user):
    session = open_session(remote, user, accountTypeIds=["sample-card-acquirer"])
    page.goto(session["url"])
    page.fill("#f-merchantId", "M-1")
    page.fill("#f-apiKey", "key")
    page.fill("#f-terminalCount", "4")
    page.select_option("#f-environment", "test")
    page.set_input_files("#f-certificate", files=[{"name": "client.pem", "mimeType": "application/x-pem-file",
                                                   "buffer": b"-----BEGIN CERTIFICATE-----\n"}])
    page.shots("filled")
    page.click("#submit")
    page.wait_for_selector("#result")
    page.shots("done")
    read = remote.get(f"/accountui/{session['id']}").json()
    assert read["status"] == "Completed"
    assert remote.get(f"/accounts/{read['accountId']}").json()["accountTypeId"] == "sample-card-acquirer"
