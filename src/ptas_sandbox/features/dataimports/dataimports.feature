@dataimports @spec-4.2
Feature: Data imports
  Each fetch of transactions from a provider is a data import; data imports report problems in errors and
  warnings arrays (spec §2, §4.2 GET /dataimports and GET /dataimports/{id}, §7 rule 4, §9 2.6.0).

  Background:
    Given a partner
    And a user "Jane's Bakery" with a "dummy" account "shop"

  # A list shows every record of the caller whatever its state: the import creating "shop" started is listed
  # (spec §4.2 GET /dataimports lists data imports; §1 capability 5), at the latest once its transactions are there.
  @contract
  Scenario: Data imports are listed and read with their errors and warnings
    When I list the data imports
    Then every data import reports errors and warnings
    And the data import the account "shop" started is among them, whatever its state
    When I read that data import
    Then it reports errors and warnings
