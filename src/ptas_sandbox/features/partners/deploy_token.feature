@partners @spec-5
Feature: The deploy token
  A deploy token is a partner token with only partner:create: it creates child partners and can do nothing
  with the parent partner or the other child partners (spec §5 rule 4).

  Background:
    Given a partner
    And a token "deploy" with scope "partner:create"

  @contract
  Scenario: A deploy token creates a child partner
    When "deploy" creates a child partner "On-premise 1"
    Then the request succeeds

  @contract
  Scenario: A deploy token cannot read its parent partner
    When "deploy" reads the partner's settings
    Then the request is refused as forbidden

  @contract
  Scenario: A deploy token cannot list the child partners
    When "deploy" lists the child partners
    Then the request is refused as forbidden

  @contract
  Scenario: A deploy token cannot read another child partner
    Given a child partner "Store 7"
    When "deploy" reads the child partner "Store 7"
    Then the request is refused as forbidden or not found

  # Rule 4 again: whatever a deploy token may do for the child partners it created (rule 7 and rule 4 disagree
  # there), it cannot reach one the main partner created, nor issue its tokens.
  @contract
  Scenario: A deploy token cannot issue a token for another child partner
    Given a child partner "Store 7"
    When "deploy" creates a token "store" for the child partner "Store 7" with scope "partner:read"
    Then the request is refused as forbidden or not found

  @contract
  Scenario: A deploy token cannot list the parent partner's tokens
    When "deploy" lists the partner's tokens
    Then the request is refused as forbidden

  @sandbox
  Scenario: A deploy token issues a token for the child partner it just created
    Given a child partner "On-premise 1" created by "deploy"
    When "deploy" creates a token "installation" for the child partner "On-premise 1" with scope "partner:read"
    Then the request succeeds
    When "installation" reads the partner's settings
    Then the partner is named "On-premise 1"

  @sandbox
  Scenario: A deploy token issues no token for a child partner it did not create
    Given a child partner "Store 7"
    When "deploy" creates a token "stolen" for the child partner "Store 7" with scope "partner:read"
    Then the answer is a problem with status 404

  @contract
  Scenario: The main partner issues a new token for a child partner whose deploy token was lost
    Given a child partner "On-premise 1" created by "deploy"
    When I create a token "replacement" for the child partner "On-premise 1" with scope "partner:read"
    Then the request succeeds
    When "replacement" reads the partner's settings
    Then the partner is named "On-premise 1"
