@users @spec-5
Feature: User tokens
  A user token lasts the partner's userTokenExpirySeconds; a new one comes from CreateUserToken, by the partner
  or, with user.token:create, by the user itself (spec §4.2 notes 1-3, §5 rule 6, §9 2.11.0).

  Background:
    Given a partner

  @contract
  Scenario: A user token lasts the partner's user token lifetime
    Given my users' tokens last 7200 seconds
    When I create a user "Jane's Bakery"
    Then the user token of "Jane's Bakery" lasts 7200 seconds

  @contract
  Scenario: A token the partner issues for its user lasts the partner's user token lifetime
    Given my users' tokens last 7200 seconds
    And a user "Jane's Bakery"
    When I create a token for the user "Jane's Bakery"
    Then the new user token lasts 7200 seconds

  @contract
  Scenario: A token a user issues for itself lasts the partner's user token lifetime
    Given my users' tokens last 7200 seconds
    And a user "Jane's Bakery" whose token may refresh itself
    When "Jane's Bakery" creates a token for itself
    Then the new user token lasts 7200 seconds

  @contract @slow
  Scenario: A user token is refused once the partner's user token lifetime has passed
    Given my users' tokens last only 5 seconds
    And a user "Jane's Bakery"
    When 6 seconds pass
    And "Jane's Bakery" lists the accounts
    Then the request is refused as unauthorized

  @contract
  Scenario: The partner issues a new token for its user
    Given a user "Jane's Bakery"
    When I create a token for the user "Jane's Bakery"
    Then the request succeeds
    And the response carries a new user token

  @contract
  Scenario: user.token:create is never granted by default
    Given a user "Jane's Bakery"
    When "Jane's Bakery" creates a token for itself
    Then the request is refused as forbidden

  @contract
  Scenario: A user whose token holds user.token:create refreshes its own token
    Given a user "Jane's Bakery" whose token may refresh itself
    When "Jane's Bakery" creates a token for itself
    Then the request succeeds
    And the response carries a new user token

  @contract
  Scenario: A user with user.token:create may also use CreateUserToken for itself
    Given a user "Jane's Bakery" whose token may refresh itself
    When "Jane's Bakery" creates a token for the user "Jane's Bakery"
    Then the request succeeds
    And the response carries a new user token

  @contract
  Scenario: A user cannot issue tokens for another user
    Given a user "Jane's Bakery" whose token may refresh itself
    And a user "Max Hardware"
    When "Jane's Bakery" creates a token for the user "Max Hardware"
    Then the request is refused as forbidden or not found

  @contract
  Scenario Outline: A partner token issues user tokens with <scope>
    Given a user "Jane's Bakery"
    And a token "issuer" with scope "<scope>"
    When "issuer" creates a token for the user "Jane's Bakery"
    Then the request succeeds

    Examples:
      | scope             |
      | user:create       |
      | user:all          |
      | user.token:create |
      | user.token:all    |
