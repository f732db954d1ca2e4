@accountui @spec-4.2
Feature: Account UI sessions
  A partner opens an account UI session for one or several account types; the person creates the account on
  the hosted page and the partner reads the result (spec §4.2 POST /accountui, GET /accountui/{id}, note 4).

  Background:
    Given a partner
    And a user "Jane's Bakery"

  @contract
  Scenario: A session carries the account types it was opened for
    When I open an account UI session for "Jane's Bakery" offering "dummy" and "dummy-report"
    Then the request succeeds
    And the session offers the account types "dummy" and "dummy-report"
    When I read the account UI session
    Then the session offers the account types "dummy" and "dummy-report"

  @sandbox
  Scenario: The person creates the account on the session's page
    When I open an account UI session for "Jane's Bakery" offering "dummy" and "dummy-report"
    And the person fills in the "dummy" form on the session's page
    And I read the account UI session
    Then the session is Completed with an account

  @contract
  Scenario: The deprecated single accountTypeId still opens a session, answered as accountTypeIds
    When I open an account UI session for "Jane's Bakery" with the deprecated accountTypeId "dummy"
    Then the request succeeds
    And the session offers the account type "dummy"
