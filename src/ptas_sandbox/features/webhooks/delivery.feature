@webhooks @spec-6
Feature: Webhooks through the target's own document, notifications at a receiver the harness runs
  The webhook interface gives webhooks a callback URL and event kinds without naming their fields (spec §2, §6):
  the harness builds them from the target's document. The five test endpoints send a notification of their
  kind; account, report and data-import objects in notifications carry errors and warnings; the retired kinds
  are no longer triggered (spec §4.2, §6, §9 webhook history). On a deployment the notifications go to the
  harness's receiver (--receiver-listen, --receiver-url); without one these scenarios skip.

  Background:
    Given a partner

  @contract
  Scenario: A webhook is created, read, listed, changed and deleted
    When I subscribe a webhook to every active event kind, sent to the receiver
    Then the webhook can be read back and is listed
    When I change the webhook to AccountCreated notifications only
    Then reading the webhook shows AccountCreated notifications only
    When I delete the webhook
    Then the webhook is no longer listed or read

  @contract
  Scenario: PATCH changes a webhook
    When I subscribe a webhook to every active event kind, sent to the receiver
    And I patch the webhook to AccountCreated notifications only
    Then reading the webhook shows AccountCreated notifications only

  @contract
  Scenario Outline: A test <kind> notification reaches the receiver
    Given a webhook for <kind> notifications sent to the receiver
    When I send a test <kind> notification
    Then the receiver gets a <kind> notification
    And the <kind> notification carries what the spec gives it, with seven-digit date-times
    And every account, report and data-import object in them carries errors and warnings

    Examples:
      | kind                 |
      | AccountCreated       |
      | AccountUpdated       |
      | AccountDeleted       |
      | TransactionsImported |

  # An AccountTypeUpdated notification gives the state of a provider (spec §6): it holds no account, report or
  # data-import object whose errors and warnings there would be to check.
  @contract
  Scenario: A test AccountTypeUpdated notification reaches the receiver
    Given a webhook for AccountTypeUpdated notifications sent to the receiver
    When I send a test AccountTypeUpdated notification
    Then the receiver gets a AccountTypeUpdated notification
    And the AccountTypeUpdated notification carries what the spec gives it, with seven-digit date-times

  # Spec §6: when an event occurs (not only a test), the service notifies the webhooks subscribed to its kind; an
  # UpdateAccount is "an account was updated" whatever else may also send AccountUpdated.
  @contract
  Scenario: Creating, updating and deleting an account notifies AccountCreated, AccountUpdated and AccountDeleted
    Given a user "Jane's Bakery"
    And a webhook for AccountCreated, AccountUpdated and AccountDeleted notifications sent to the receiver
    When I create a "dummy" account "shop" for the user "Jane's Bakery" from its account type's fields
    And I rename the account "shop" to "Bakery shop"
    And I delete the account "shop"
    Then the receiver gets a AccountCreated notification
    And the receiver gets a AccountUpdated notification
    And the receiver gets a AccountDeleted notification

  # Spec §6: TransactionsImported is "transactions were imported, with or without a report": an account of a type
  # without reports (dummy, §1 capability 6) notifies it too, once its first import is done.
  @contract
  Scenario: An import of an account without reports notifies TransactionsImported
    Given a user "Jane's Bakery"
    And a webhook for TransactionsImported notifications sent to the receiver
    When I create a "dummy" account "shop" for the user "Jane's Bakery" from its account type's fields
    Then the receiver gets a TransactionsImported notification once the account "shop" has its transactions

  # Spec §6: a notification goes to the callback URL of the webhook, of every webhook subscribed to its kind.
  @contract
  Scenario: Every webhook subscribed to a kind gets its notification
    Given a webhook for AccountCreated notifications sent to the receiver
    And a second webhook for AccountCreated notifications sent to the receiver
    When I send a test AccountCreated notification
    Then the receiver gets a AccountCreated notification
    And the second webhook gets a AccountCreated notification

  # Spec §2, §6: a webhook subscribes to event kinds; a kind it did not subscribe to is not sent to it.
  @contract
  Scenario: A webhook receives no notification of a kind it did not subscribe to
    Given a webhook for AccountDeleted notifications sent to the receiver
    And a second webhook for AccountCreated notifications sent to the receiver
    When I send a test AccountCreated notification
    Then the second webhook gets a AccountCreated notification
    When I send a test AccountDeleted notification
    Then the receiver gets a AccountDeleted notification
    And the first webhook got no AccountCreated notification

  @contract
  Scenario: The five test events arrive and no retired kind is sent
    Given a webhook for every active kind of notifications sent to the receiver
    When I send a test notification of every active kind
    Then the receiver gets one notification of each active kind and none of a retired kind
    And every account, report and data-import object in them carries errors and warnings
