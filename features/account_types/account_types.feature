@account_types @spec-2
Feature: Account types
  Account types tell a client which provider, which authentication and which parameters an account needs;
  clients build their forms from accountFields and never hard-code types (spec §1 capabilities 4 and 6, §2).

  Background:
    Given a partner

  @contract
  Scenario: The sandbox offers the three dummy account types
    When I list the account types
    Then the list has the account types "dummy", "dummy-auth" and "dummy-report"

  @contract
  Scenario: Every account type describes its fields, help, reports and provider status
    When I list the account types
    Then every account type describes its fields, help, reports and provider status

  @contract
  Scenario Outline: The dummy account type <type> <uses> OAuth2 and <has> reports
    When I read the account type "<type>"
    Then the account type describes its fields, help, reports and provider status
    And the account type <uses> OAuth2
    And the account type <has> reports

    Examples:
      | type         | uses         | has         |
      | dummy        | does not use | has no      |
      | dummy-auth   | uses         | has no      |
      | dummy-report | does not use | has         |
