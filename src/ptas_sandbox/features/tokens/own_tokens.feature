@tokens @spec-4.1
Feature: A partner's own tokens
  A partner creates, lists and revokes its own partner tokens (spec §2 token record, §3 token states,
  §4.1 token endpoints, §5 rules 2 and 3, §8 limits on token ids).

  Background:
    Given a partner

  @contract
  Scenario: A new token is valid and its access token is returned once
    When I create a token "backend" with scope "partner:read" lasting 86400 seconds
    Then the request succeeds
    And the response carries the new token's access token
    And the new token is valid
    And the new token has never been used
    And the new token is named "backend" with scope "partner:read"
    And the new token lives 86400 seconds

  @contract
  Scenario: The token list never carries access tokens
    Given a token "reader" with scope "partner:read"
    When "reader" lists the partner's tokens
    Then the request succeeds
    And the list shows the token "reader"
    And no token in the list carries its access token

  @contract
  Scenario Outline: A partner token gets an id only when it lives longer than one hour
    When I create a token "probe" with scope "partner:read" lasting <seconds> seconds
    Then the request succeeds
    And the new token <has an id or not>

    Examples:
      | seconds  | has an id or not |
      | 3601     | has an id        |
      | 31536000 | has an id        |
      | 3600     | has no id        |
      | 600      | has no id        |

  @contract
  Scenario: A one-year token is accepted as asked
    When I create a token "yearly" with scope "partner:read" lasting 31536000 seconds
    Then the request succeeds
    And the new token lives 31536000 seconds

  @contract
  Scenario: A token with partner:update creates tokens but cannot list them
    Given a token "updater" with scope "partner:update"
    When "updater" creates a token "made by updater" with scope "partner:update" lasting 86400 seconds
    Then the request succeeds
    When "updater" lists the partner's tokens
    Then the request is refused as forbidden

  @contract
  Scenario Outline: Listing tokens needs partner:read or partner:all
    Given a token "lister" with scope "<scope>"
    When "lister" lists the partner's tokens
    Then the request succeeds
    And the list shows the token "lister"

    Examples:
      | scope        |
      | partner:read |
      | partner:all  |

  @contract
  Scenario: A token used for a call shows when it was last used
    Given a token "reader" with scope "partner:read"
    And a token "watcher" with scope "partner:read"
    When "watcher" lists the partner's tokens
    Then the listed token "reader" has never been used
    When "reader" reads the partner's settings
    And "watcher" lists the partner's tokens
    Then the listed token "reader" has been used

  @contract @slow
  Scenario: lastUsedAt moves with each use of the token
    Given a token "reader" with scope "partner:read"
    And a token "watcher" with scope "partner:read"
    When "reader" reads the partner's settings
    And "watcher" lists the partner's tokens
    Then the listed token "reader" has been used
    When 2 seconds pass
    And "reader" reads the partner's settings
    And "watcher" lists the partner's tokens
    Then the listed token "reader" was last used later than before

  @contract
  Scenario: A revoked token is marked revoked and no longer accepted
    Given a token "admin" with scope "partner:all"
    And a token "doomed" with scope "partner:read"
    When "admin" revokes the token "doomed"
    Then the request succeeds
    And the answer carries no access token
    When "admin" lists the partner's tokens
    Then the listed token "doomed" is revoked
    And the listed token "admin" is valid
    When "doomed" reads the partner's settings
    Then the request is refused as unauthorized

  # Spec §3: a revoked token is no longer valid, on whatever path it is used, not only on the token endpoints.
  @contract
  Scenario: A revoked token is refused outside the partner paths too
    Given a token "admin" with scope "partner:all"
    And a token "doomed" with scope "partner:read account:read"
    When "doomed" lists the accounts
    Then the request succeeds
    When "admin" revokes the token "doomed"
    Then the request succeeds
    When "doomed" lists the accounts
    Then the request is refused as unauthorized

  @contract
  Scenario: A token's scopes are separated by a single space
    When I create a token "pair" with scope "partner:read user:read" lasting 86400 seconds
    Then the new token is named "pair" with scope "partner:read user:read"
    When I list my tokens
    Then the listed token "pair" has the scope "partner:read user:read"

  @contract
  Scenario: The token list is an object holding the tokens under tokens
    Given a token "reader" with scope "partner:read"
    When "reader" lists the partner's tokens
    Then the token list is an object whose tokens field lists the token "reader"

  @contract
  Scenario: A token cannot revoke itself
    Given a token "admin" with scope "partner:all"
    When "admin" tries to revoke itself
    Then the request is refused
    When "admin" lists the partner's tokens
    Then the listed token "admin" is valid

  @sandbox
  Scenario: The simulator answers a token revoking itself with 409
    Given a token "admin" with scope "partner:all"
    When "admin" tries to revoke itself
    Then the answer is a problem with status 409
    And the problem type ends with ":conflict"

  @contract @slow
  Scenario: A token expires when its lifetime has passed
    Given a token "watcher" with scope "partner:read"
    And a token "brief" with scope "partner:read" lasting 5 seconds
    When 6 seconds pass
    And "watcher" lists the partner's tokens
    Then the listed token "brief" is expired
    When "brief" reads the partner's settings
    Then the request is refused as unauthorized

  @contract @slow
  Scenario: A token lasting more than an hour expires after its lifetime
    Given a token "watcher" with scope "partner:read" lasting 31536000 seconds
    And a token "day" with scope "partner:read" lasting 86400 seconds
    When 86401 seconds pass
    And "watcher" lists the partner's tokens
    Then the listed token "day" is expired
    When "day" reads the partner's settings
    Then the request is refused as unauthorized

  @sandbox
  Scenario: A token cannot grant scopes it does not hold
    Given a token "reader" with scope "partner:read partner:update"
    When "reader" creates a token "greedy" with scope "user:all" lasting 86400 seconds
    Then the answer is a problem with status 403

  @sandbox
  Scenario Outline: A lifetime that is not a positive number of seconds is refused
    When I create a token "odd" with scope "partner:read" lasting <seconds> seconds
    Then the answer is a problem with status 400

    Examples:
      | seconds |
      | 0       |
      | -60     |

  @sandbox
  Scenario: The initial partner token is replaced by a long-lived one and revoked, as the spec advises
    Given a token "backend" with scope "partner:all" lasting 31536000 seconds
    When "backend" revokes my initial token
    Then the request succeeds
    When I read my partner settings
    Then the request is refused as unauthorized
    When "backend" reads the partner's settings
    Then the request succeeds
