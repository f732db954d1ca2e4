@oauth @spec-1
Feature: The OAuth2 account creation flow
  For an account type with an accountFields element of Type Auth, the partner software asks for a redirect
  URL, sends the user to the provider, gets the result back, then creates the account with the authentication
  reference (spec §1 "OAuth2 account creation flow", §4.2 note 5, §7 rule 3, §9 2.0.0-beta2). On a deployment the
  provider's page is answered by a form the harness recognises, or by --oauth-consent COMMAND or a person
  (--oauth-consent interactive); otherwise the return step is not checked, with that said.

  Background:
    Given a partner
    And a user "Jane's Bakery"

  @contract
  Scenario: Step 1 answers the provider's URL and the authentication reference
    When I ask for an OAuth2 redirect URL for a "dummy-auth" account of "Jane's Bakery" returning to "https://partner.example/done"
    Then the response carries the provider's redirect URL and an authentication reference

  @contract
  Scenario: An approved authorization returns to the partner and the account is created with the reference
    When I ask for an OAuth2 redirect URL for a "dummy-auth" account of "Jane's Bakery" returning to "https://partner.example/done"
    And the user approves at the provider
    Then the user is sent back to "https://partner.example/done" with the reference and status "Success"
    And the return step carries the reference and the status "Success" in its headers
    When I create the account "bank" with the authentication reference
    Then the request succeeds

  @contract
  Scenario Outline: A failed authorization returns with the status <status>
    When I ask for an OAuth2 redirect URL for a "dummy-auth" account of "Jane's Bakery" returning to "https://partner.example/done"
    And the user <decision> at the provider
    Then the user is sent back to "https://partner.example/done" with the reference and status "<status>"
    And the return step carries the reference and the status "<status>" in its headers
    When I create the account "bank" with the authentication reference
    Then the reference of the failed authorization creates no working account

    Examples:
      | decision                  | status        |
      | reports a missing account | NotFoundError |
      | hits an error             | OtherError    |

  @contract
  Scenario: Without a redirect URL in the request the user returns to the partner's first redirect URL
    When I set my redirect URLs to "https://acme.example/oauth/done" and "https://acme.example/oauth/again"
    And I ask for an OAuth2 redirect URL for a "dummy-auth" account of "Jane's Bakery"
    And the user approves at the provider
    Then the user is sent back to "https://acme.example/oauth/done" with the reference and status "Success"
    And the return step carries the reference and the status "Success" in its headers

  @contract
  Scenario: Without any redirect URL the user ends on the service's own page, the result in its headers
    When I clear my redirect URLs
    And I ask for an OAuth2 redirect URL for a "dummy-auth" account of "Jane's Bakery"
    And the user approves at the provider
    Then the user sees the service's own page
    And the return step carries the reference and the status "Success" in its headers

  @sandbox
  Scenario: Reconnecting an OAuth2 account starts with CreateAccountOauthRedirectUrl, then UpdateAccount
    When I ask for an OAuth2 redirect URL for a "dummy-auth" account of "Jane's Bakery" returning to "https://partner.example/done"
    And the user approves at the provider
    And I create the account "bank" with the authentication reference
    And I ask for an OAuth2 redirect URL to reconnect the account "bank"
    Then the response carries the provider's redirect URL and an authentication reference
    When the user approves at the provider
    And I update the account "bank" with the new authentication reference
    Then the request succeeds
