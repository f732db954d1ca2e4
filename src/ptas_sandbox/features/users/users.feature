@users @spec-4.2
Feature: Users of a partner
  A partner registers users, reads, lists, searches, renames and deletes them (spec §1 capability 2, §2 user
  resource, §4.2 note 1, §4.3 GetUsers, UpdateUser, DeleteUser, §9 2.1.4, 2.1.5, 2.5.0).

  Background:
    Given a partner

  # Spec §4.2 note 1: the e-mail address is optional, so the first user is created without one.
  @contract
  Scenario: Creating a user answers its id and its first user token
    When I create a user "Jane's Bakery" without an e-mail address
    Then the request succeeds
    And the response carries the user's id and a user token

  @contract
  Scenario: The first user token holds account:all and transaction:all unless told otherwise
    When I create a user "Jane's Bakery"
    Then the user token of "Jane's Bakery" holds exactly "account:all transaction:all"

  @contract
  Scenario: The partner chooses the scope of the first user token
    When I create a user "Jane's Bakery" with scope "account:read transaction:read"
    Then the request succeeds
    And the user token of "Jane's Bakery" holds exactly "account:read transaction:read"

  @contract
  Scenario: A user's e-mail address is kept
    When I create a user "Jane's Bakery" with the e-mail address "jane@bakery.example"
    Then the response shows the e-mail address "jane@bakery.example"

  # Spec §1 capability 2: "user information and statistics can be read" (the statistics' shape is not shown).
  @contract
  Scenario: A user can be read back and renamed
    Given a user "Jane's Bakery"
    When I rename the user "Jane's Bakery" to "Jane's Bakery & Café"
    Then the request succeeds
    When I read the user "Jane's Bakery"
    Then the user is named "Jane's Bakery & Café"
    And the user is read with its statistics

  @contract
  Scenario: Users are found by name, by e-mail address and by a search text
    Given a user "Jane's Bakery"
    And a user "Max Hardware"
    When I list my users named "Jane's Bakery"
    Then the user "Jane's Bakery" is listed
    And the user "Max Hardware" is not listed
    When I list my users with the e-mail address "max.hardware@example.test"
    Then the user "Max Hardware" is listed
    And the user "Jane's Bakery" is not listed
    When I search my users for the name of "Max Hardware"
    Then the user "Max Hardware" is listed

  @sandbox
  Scenario: The simulator's search matches part of a name or e-mail address, ignoring case
    Given a user "Jane's Bakery"
    And a user "Max Hardware"
    When I search my users for "hardware"
    Then the user "Max Hardware" is listed
    And the user "Jane's Bakery" is not listed

  @contract
  Scenario: A deleted user is listed with deletedAt
    Given a user "Jane's Bakery"
    And a user "Max Hardware"
    When I delete the user "Jane's Bakery"
    Then the request succeeds
    When I list my users
    Then the user "Jane's Bakery" is listed as deleted
    And the user "Max Hardware" is listed without deletedAt
    When I read the user "Jane's Bakery"
    Then the user is shown with deletedAt, if it is shown at all

  @contract
  Scenario: A child partner cannot read its parent's users
    Given a user "Jane's Bakery"
    And a child partner "Store 7"
    And a token "store" of the child partner "Store 7" with scope "user:all"
    When "store" reads the user "Jane's Bakery"
    Then the request is refused as forbidden or not found

  @sandbox
  Scenario: A deleted user's token stops working
    Given a user "Jane's Bakery" whose token may refresh itself
    When I delete the user "Jane's Bakery"
    And "Jane's Bakery" creates a token for itself
    Then the request is refused as unauthorized
