@accounts @spec-4.3
Feature: Accounts of a user
  A partner, or the user itself, creates, reads, lists, updates and deletes the user's accounts; users see only
  their own accounts (spec §1 terms and capability 3, §2 account resource, §4.3, §7 rule 4, §9 2.8.2).

  Background:
    Given a partner
    And a user "Jane's Bakery"

  @contract
  Scenario: The partner creates an account for its user from the account type's fields
    When I create a "dummy" account "shop" for the user "Jane's Bakery" from its account type's fields
    Then the request succeeds
    And the response reports errors, warnings and warningDetails
    When I read the account "shop"
    Then the account shows its statistics

  @contract
  Scenario: A user creates its own account with its user token
    When "Jane's Bakery" creates a "dummy" account "shop" from its account type's fields
    Then the request succeeds
    When "Jane's Bakery" lists the accounts
    Then the list shows the account "shop"

  @contract
  Scenario: A user sees only the accounts it created
    Given a user "Max Hardware" with a "dummy" account "max's shop"
    And a user "Jane's Bakery" with a "dummy" account "jane's shop"
    When "Jane's Bakery" lists the accounts
    Then the list shows the account "jane's shop"
    And the list does not show the account "max's shop"
    When "Jane's Bakery" reads the account "max's shop"
    Then the request is refused as forbidden or not found

  @contract
  Scenario: Updating an account answers warningDetails
    Given a user "Jane's Bakery" with a "dummy" account "shop"
    When I rename the account "shop" to "Bakery shop"
    Then the request succeeds
    And the response reports errors, warnings and warningDetails

  @contract
  Scenario: A deleted account is no longer listed
    Given a user "Jane's Bakery" with a "dummy" account "shop"
    When I delete the account "shop"
    Then the request succeeds
    When "Jane's Bakery" lists the accounts
    Then the list does not show the account "shop"

  @contract
  Scenario: A user has one account per provider
    Given a user "Jane's Bakery" with a "dummy" account "shop"
    When I create a "dummy" account "second shop" for the user "Jane's Bakery" from its account type's fields
    Then the request is refused

  @sandbox
  Scenario: The simulator answers a second account of the same provider with 409
    Given a user "Jane's Bakery" with a "dummy" account "shop"
    When I create a "dummy" account "second shop" for the user "Jane's Bakery" from its account type's fields
    Then the answer is a problem with status 409
