@transactions @spec-4.3
Feature: Transactions of an account
  Once an account exists the service fetches its transactions; GetTransactions pages through them with page
  references, GetTransaction reads one, and the exclude flags trim the list of fields (spec §1 capability 5,
  §2 transaction resource, §4.3 GetTransactions and GetTransaction, §9 2.2.2 and 2.7.0).

  Background:
    Given a partner
    And a user "Jane's Bakery" with a "dummy" account "shop"

  @contract @slow
  Scenario: Transactions carry what the spec names
    When the account "shop" has received its transactions
    And I read the transactions of the account "shop"
    Then the transactions carry their creation time, order number, booking text and fields
    And every transaction carries its TransactionType
    And no transaction field is one spec §9 removed

  @contract @slow
  Scenario: Paging shows every transaction once, as many as the account counts
    When the account "shop" has received its transactions
    And I page through every transaction of the account "shop"
    Then every transaction was seen once
    And the account "shop" counts as many transactions as the pages held

  @contract @slow
  Scenario: excludeDeprecatedFields removes deprecated fields
    When the account "shop" has received its transactions
    And I read the transactions of the account "shop" without deprecated fields
    Then no transaction lists a field the target marks deprecated

  @sandbox
  Scenario: The dummy provider delivers a deprecated field unless it is excluded
    When 60 seconds pass
    And I read the transactions of the account "shop"
    Then some field of a transaction is deprecated

  # Spec §4.3: the flags are parameters of GetTransactions, as pageReference is: they hold on every page.
  @contract @slow
  Scenario Outline: The exclude flag for <kind> fields holds on every page
    When the account "shop" has received its transactions
    And I page through every transaction of the account "shop" without <kind> fields
    Then no transaction of any page lists a field the target marks <kind>

    Examples:
      | kind       |
      | deprecated |
      | mapped     |

  # Spec §4.3: "true removes" what the flag names; false, its other value, removes nothing, and true removes
  # nothing else. A flag read as "present" or one that drops every field is a departure either way. What it names
  # are entries of the list of fields: the fixed fields they map to (orderNumber, bookingText: §2, §4.3) stay.
  @contract @slow
  Scenario Outline: The exclude flag for <kind> fields removes only those, and nothing when false
    When the account "shop" has received its transactions
    And I read the transactions of the account "shop" with the <kind> flag unset, false and true
    Then the false read lists every field of the unset one, and the true read every field but those marked <kind>
    And the true read keeps each transaction's order number and booking text

    Examples:
      | kind       |
      | deprecated |
      | mapped     |

  # Spec §2: PaymentClassification includes the values Donation, Tax and Adjustment, by those names; and the
  # values the transactions carry are the ones the target's own document allows, where it lists them.
  @contract @slow
  Scenario: Transactions name their PaymentClassification by the spec's values
    When the account "shop" has received its transactions
    And I page through every transaction of the account "shop"
    Then every transaction's classification is spelled as the spec and the target's document name it

  @contract @slow
  Scenario: excludeMappedFields removes fields mapped to fixed transaction fields
    When the account "shop" has received its transactions
    And I read the transactions of the account "shop" without mapped fields
    Then no transaction lists a field the target marks mapped

  @contract @slow
  Scenario: GetTransaction reads one transaction
    When the account "shop" has received its transactions
    And I read the first transaction of the account "shop" on its own
    Then it is the same transaction
    And it carries its TransactionType

  @contract
  Scenario: Another user cannot read the account's transactions
    Given a user "Max Hardware"
    When "Max Hardware" reads the transactions of the account "shop"
    Then the request is refused as forbidden or not found

  # Spec §1: users see only the accounts they created, so not one transaction of another user's account either.
  @contract @slow
  Scenario: Another user cannot read one of the account's transactions
    Given a user "Max Hardware"
    When the account "shop" has received its transactions
    And "Max Hardware" reads the first transaction of the account "shop" on its own
    Then the request is refused as forbidden or not found

  # The same rule on every path that reads them: the deprecated form too (spec §4.3), where the target offers it.
  @contract @slow
  Scenario: Another user cannot read the account's transactions in the deprecated form either
    Given a user "Max Hardware"
    When the account "shop" has received its transactions
    And "Max Hardware" reads the transactions of the account "shop" in the deprecated form
    Then the request is refused as forbidden or not found

  # Spec §5 rule 7: transaction:read and transaction:all read transactions; the account scopes do not (§7 rule 1).
  @contract @slow
  Scenario Outline: GetTransaction with a token holding only <scope> is <outcome>
    Given a token "reader" with scope "<scope>"
    When the account "shop" has received its transactions
    And "reader" reads the first transaction of the account "shop" on its own
    Then the call is <outcome>

    Examples:
      | scope            | outcome   |
      | transaction:read | allowed   |
      | transaction:all  | allowed   |
      | account:all      | forbidden |
      | account:read     | forbidden |

  @contract @slow
  Scenario: TriggerAccountRefresh re-reads transactions from a start date
    When the account "shop" has received its transactions
    And I ask the account "shop" to re-read its transactions from 7 days ago
    Then the request succeeds

  @sandbox
  Scenario: The createdAt search finds transactions from that time on
    When 60 seconds pass
    And I search the transactions of the account "shop" created since the 50th one
    Then every transaction found was created at or after that time

  @sandbox
  Scenario: The first of several pages has only a next page reference
    When 60 seconds pass
    And I read the transactions of the account "shop"
    Then the first page has no previous page and a next page

  @contract @slow
  Scenario: Paging reaches the last page, which has no next page
    When the account "shop" has received its transactions
    And I page through every transaction of the account "shop"
    Then the last page was reached and has no next page

  @contract @slow
  Scenario: The second page refers back to the first
    When the account "shop" has received its transactions
    And I read the first two pages of the transactions of the account "shop"
    Then the second page's previousPageReference leads back to the first page

  # The spec names the createdAt search (§4.3) but not what it matches: from that time on, up to it, that
  # instant or that day are all faithful. Under each, a search two days before every transaction or one two days
  # after them finds less than all; a target that ignores the search finds all with both. The simulator's
  # reading (from that time on) is the @sandbox scenario above.
  @contract @slow
  Scenario: The createdAt search narrows the account's transactions
    When the account "shop" has received its transactions
    And I search the transactions of the account "shop" created two days before them all and two days after
    Then the two searches do not both find every transaction, and find only the account's

  @contract @slow
  Scenario Outline: GetTransaction honours the exclude flag for <kind> fields
    When the account "shop" has received its transactions
    And I read a transaction of the account "shop" with a <kind> field on its own without <kind> fields
    Then the transaction lists no field the target marks <kind>
    And it keeps the order number and booking text the list shows

    Examples:
      | kind       |
      | deprecated |
      | mapped     |

  @contract @slow
  Scenario: The account's statistics give the dates of its first and last transaction
    When the account "shop" has received its transactions
    And I page through every transaction of the account "shop"
    Then the account "shop" statistics give the dates of its first and last transaction

  @contract @slow
  Scenario: Transactions carry Shopper information
    When the account "shop" has received its transactions
    And I read the transactions of the account "shop"
    Then some transaction carries Shopper information
