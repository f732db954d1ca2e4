@reports @spec-4.3
Feature: Reports
  Account types with reports deliver provider reports; transactions link to them and reports carry errors and
  warnings (spec §1 capability 6, §2 transaction and report resources, §4.3 GetReports and GetReport).

  Background:
    Given a partner
    And a user "Jane's Bakery" with a "dummy-report" account "shop"

  @contract @slow
  Scenario: Reports are listed and read with their errors and warnings
    When the account "shop" has received a report
    And I list the reports of the account "shop"
    Then every report reports errors and warnings
    When I read that report
    Then it reports errors and warnings

  # Spec §1: users see only the accounts they created, so not one report of another user's account, read by its id
  # alone, either. The other user comes once the report is there: a simulator moves its clock past a day for it,
  # longer than a user token lives.
  @contract @slow
  Scenario: Another user cannot read a report of the account
    When the account "shop" has received a report
    Given a user "Max Hardware"
    When "Max Hardware" reads the first report of the account "shop" on its own
    Then the request is refused as forbidden or not found

  @contract @slow
  Scenario: Transactions link to their report
    When the account "shop" has received a report
    And I read the transactions of the account "shop"
    Then some transaction links to a report

  # The link and the search from both sides, for every report the page names: a search missing a transaction
  # that links to its report is as wrong as one finding another report's.
  @contract @slow
  Scenario: The reportId search finds exactly the transactions that link to the report
    When the account "shop" has received a report
    And I read the transactions of the account "shop"
    And I search the transactions of the account "shop" by each report they link to
    Then each search finds every transaction of the page that links to its report, and only such transactions
