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

  @contract
  Scenario: Account, account type, data import and session responses
    Given a user "Jane's Bakery" with a "dummy" account "shop"
    When I list the account types
    And I read the account type "dummy-auth"
    And I read the account "shop"
    And "Jane's Bakery" lists the accounts
    And I rename the account "shop" to "Bakery shop"
    And I list the data imports
    And I open an account UI session for "Jane's Bakery" offering "dummy" and "dummy-report"
    And I read the account UI session
    And I open a user UI session
    And I read the user UI session
    And I ask for an OAuth2 redirect URL for a "dummy-auth" account of "Jane's Bakery" returning to "https://partner.example/done"
    And I send a test TransactionsImported notification
    Then every date-time in every response has seven fractional digits

  @contract @slow
  Scenario: Transaction and report responses
    Given a user "Jane's Bakery" with a "dummy-report" account "shop"
    When the account "shop" has received a report
    And I read the transactions of the account "shop"
    And I read the first transaction of the account "shop" on its own
    And I list the reports of the account "shop"
    And I read the account "shop"
    Then every date-time in every response has seven fractional digits
