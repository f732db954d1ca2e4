@versioning @spec-2
Feature: Date-times with seven fractional digits
  Every date-time of every response is ISO 8601 UTC with exactly seven fractional digits and a trailing Z,
  zero fractions included (spec §2, §9 rule 3, 2.6.1).

  Background:
    Given a partner

  @contract
  Scenario: Token, partner and user responses
    Given a token "admin" with scope "partner:all"
    And a token "doomed" with scope "partner:read"
    And a child partner "Store 7"
    And a token "store" of the child partner "Store 7" with scope "partner:read"
    And a user "Jane's Bakery"
    When "doomed" reads the partner's settings
    And "admin" revokes the token "doomed"
    And "admin" lists the partner's tokens
    And I list the tokens of the child partner "Store 7"
    And I read the child partner "Store 7"
    And I list my child partners
    And I read the user "Jane's Bakery"
    And I delete the user "Jane's Bakery"
    And I list my users
    And I create a token for the user "Jane's Bakery"
    Then every date-time in every response has seven fractional digits

  @contract
  Scenario: Error responses
    Given a token "updater" with scope "partner:update"
    When "updater" lists the partner's tokens
    And I read my partner settings without a token
    Then every date-time in every response has seven fractional digits

  @sandbox
  Scenario: A date-time on a whole second keeps its zero fraction
    Given the clock stands still at a whole minute
    When I create a token "on the minute" with scope "partner:read" lasting 60 seconds
    Then the new token was created at the whole minute with seven zero digits
