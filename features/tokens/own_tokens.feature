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
