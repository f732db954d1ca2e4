@webhooks @spec-6
Feature: Webhooks and test events
  A partner subscribes webhooks to event kinds and the service POSTs a notification to the callback URL when
  one occurs; the test endpoints send a test notification of each kind (spec §4.2, §6, §9 webhook history).

  Background:
    Given a partner

  @contract
  Scenario Outline: The test endpoint for <kind> accepts a request
    When I send a test <kind> notification
    Then the request succeeds

    Examples:
      | kind                 |
      | AccountCreated       |
      | AccountUpdated       |
      | AccountDeleted       |
      | TransactionsImported |
      | AccountTypeUpdated   |

  @sandbox
  Scenario Outline: A test <kind> notification reaches a webhook subscribed to it
    Given a webhook "sync" for <kind> notifications sent to an inbox
    When I send a test <kind> notification
    Then the inbox receives the <kind> notification
    And every notification in the inbox carries account errors and warnings

    Examples:
      | kind                 |
      | AccountCreated       |
      | AccountUpdated       |
      | AccountDeleted       |
      | TransactionsImported |
      | AccountTypeUpdated   |

  @sandbox
  Scenario: Creating an account notifies AccountCreated
    Given a user "Jane's Bakery"
    And a webhook "sync" for AccountCreated notifications sent to an inbox
    When I create a "dummy" account "shop" for the user "Jane's Bakery" from its account type's fields
    Then the inbox receives the AccountCreated notification

  @sandbox
  Scenario: A webhook gets only the kinds it subscribed to
    Given a webhook "sync" for AccountDeleted notifications sent to an inbox
    When I send a test AccountCreated notification
    Then the inbox receives nothing

  @sandbox
  Scenario: The retired kinds are accepted and never fire
    Given a webhook "legacy" for ReportImported, TransactionsImportError and AccountError notifications sent to an inbox
    When I send a test TransactionsImported notification
    And I send a test AccountUpdated notification
    Then the inbox receives nothing

  @sandbox
  Scenario: A paused webhook receives nothing
    Given a webhook "sync" for AccountCreated notifications sent to an inbox
    When I pause the webhook "sync"
    And I send a test AccountCreated notification
    Then the inbox receives nothing

  @sandbox
  Scenario: Webhooks are listed
    Given a webhook "sync" for AccountCreated notifications sent to an inbox
    When I list my webhooks
    Then the list shows the webhook "sync"
