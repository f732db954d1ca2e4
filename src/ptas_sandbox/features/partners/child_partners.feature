@partners @spec-4.2
Feature: Child partners
  A partner creates, reads, lists, renames and deletes its child partners (spec §1 capability 1, §4.2,
  §4.3 GetPartners and delete child partner, §9 2.1.2 and 2.1.4).

  Background:
    Given a partner

  @contract
  Scenario: A new child partner can be read back
    When I create a child partner "Store 7"
    Then the request succeeds
    When I read the child partner "Store 7"
    Then the partner is named "Store 7"
    And the partner record lists its redirect URLs under redirectUrls

  @contract
  Scenario: The child partners are listed
    Given a child partner "Store 7"
    And a child partner "Store 8"
    When I list my child partners
    Then the list shows the child partner "Store 7"
    And the list shows the child partner "Store 8"

  @contract
  Scenario: A child partner's name can be changed
    Given a child partner "Store 7"
    When I rename the child partner "Store 7" to "Store 7 Mitte"
    Then the request succeeds
    When I read the child partner "Store 7"
    Then the partner is named "Store 7 Mitte"

  @contract
  Scenario: A deleted child partner is no longer listed
    Given a child partner "Store 7"
    When I delete the child partner "Store 7"
    Then the request succeeds
    When I list my child partners
    Then the list does not show the child partner "Store 7"

  @sandbox
  Scenario: A deleted child partner's tokens stop working
    Given a child partner "Store 7"
    And a token "store" of the child partner "Store 7" with scope "partner:read"
    When I delete the child partner "Store 7"
    And "store" reads the partner's settings
    Then the request is refused as unauthorized

  @contract
  Scenario: A child partner cannot read its sibling
    Given a child partner "Store 7"
    And a child partner "Store 8"
    And a token "store" of the child partner "Store 7" with scope "partner:all"
    When "store" reads the child partner "Store 8"
    Then the request is refused as forbidden or not found

  # Spec §9 2.3.0: uiSettings on CreatePartner and UpdatePartner; what a create takes, a read of the record shows.
  @contract
  Scenario: A child partner is created with its Account UI styling
    When I create a child partner "Styled" with the Account UI styling primary colour "#0b5fff"
    Then the child partner "Styled" shows the Account UI styling primary colour "#0b5fff"

  # Spec §5 rule 4 and §4.1: a partner reaches its own child partners only; a sibling's tokens are a sibling's
  # record too, on every path that serves them.
  @contract
  Scenario: A child partner cannot list its sibling's tokens
    Given a child partner "Store 7"
    And a child partner "Store 8"
    And a token "store" of the child partner "Store 7" with scope "partner:all"
    When "store" lists the tokens of the child partner "Store 8"
    Then the request is refused as forbidden or not found
