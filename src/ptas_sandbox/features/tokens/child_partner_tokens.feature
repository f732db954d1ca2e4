@tokens @spec-4.1
Feature: Tokens of child partners
  A partner with partner:create issues tokens for its child partners; they last six months unless told
  otherwise (spec §4.1 rule 2, §5 rule 4, §8).

  Background:
    Given a partner
    And a child partner "Store 7"

  @contract
  Scenario: A child partner's token lasts six months by default
    When I create a token "store" for the child partner "Store 7" with scope "partner:read"
    Then the request succeeds
    And the response carries the new token's access token
    And the new token is valid
    And the new token lasts about six months

  @sandbox
  Scenario: The simulator's six months are half of the spec's one-year 31536000 seconds
    When I create a token "store" for the child partner "Store 7" with scope "partner:read"
    Then the new token lives 15768000 seconds

  @contract
  Scenario: A child partner's token acts for the child partner
    Given a token "store" of the child partner "Store 7" with scope "partner:read"
    When "store" reads the partner's settings
    Then the partner is named "Store 7"

  @contract
  Scenario: The child partner's token list never carries access tokens
    Given a token "store" of the child partner "Store 7" with scope "partner:read"
    When I list the tokens of the child partner "Store 7"
    Then the request succeeds
    And the list shows the token "store"
    And no token in the list carries its access token

  # Spec §4.1: the `self` token paths are the calling partner's own. The parent's list holds none of a child
  # partner's tokens, and a child partner's own revocation path reaches none of its parent's.
  @contract
  Scenario: A partner's own token paths reach no other partner's tokens
    Given a token "store" of the child partner "Store 7" with scope "partner:read partner:update"
    And a token "spare" with scope "partner:read" lasting 7200 seconds
    When I list my tokens
    Then the list does not show the token "store"
    When "store" revokes the token "spare"
    Then the request is refused as forbidden or not found
    When "spare" reads the partner's settings
    Then the request succeeds

  @contract
  Scenario: A revoked child partner token is no longer accepted
    Given a token "store" of the child partner "Store 7" with scope "partner:read"
    When I revoke the token "store" of the child partner "Store 7"
    Then the request succeeds
    When I list the tokens of the child partner "Store 7"
    Then the listed token "store" is revoked
    When "store" reads the partner's settings
    Then the request is refused as unauthorized

  @contract
  Scenario: Creating a child partner's token needs partner:create
    Given a token "settings" with scope "partner:read partner:update"
    When "settings" creates a token "store" for the child partner "Store 7" with scope "partner:read"
    Then the request is refused as forbidden

  # Spec §8: any lifetime the caller sends, "a one-year token uses 31536000": for every token that takes one.
  @contract
  Scenario: A child partner's token lives the expiresIn it was given
    When I create a token "store" for the child partner "Store 7" with scope "partner:read" lasting 31536000 seconds
    Then the request succeeds
    And the new token lives 31536000 seconds
