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
    Then every account type, read on its own, describes its fields, help, reports and provider status

  @sandbox
  Scenario: The simulator's list of account types carries each type's detail
    When I list the account types
    Then every account type in the list describes its fields, help, reports and provider status

  @contract
  Scenario Outline: The dummy account type <type> is as spec §1 capability 6 describes it
    When I read the account type "<type>"
    Then the account type describes its fields, help, reports and provider status
    And the account type <property>

    Examples:
      | type         | property               |
      | dummy        | does not use OAuth2    |
      | dummy        | has no reports         |
      | dummy-auth   | uses OAuth2            |
      | dummy-report | has reports            |

  @sandbox
  Scenario Outline: The simulator's dummy account type <type> <property>
    When I read the account type "<type>"
    Then the account type <property>

    Examples: what the spec does not say of them
      | type         | property            |
      | dummy-auth   | has no reports      |
      | dummy-report | does not use OAuth2 |
