@versioning @spec-9
Feature: Version 2 of the interface
  Paths carry the major version in /partner/v2; schemas never forbid new properties; earlier paths are gone
  (spec §4.1, §4.2 note 6, §9 rules 1 and 2).

  Background:
    Given a partner

  @contract
  Scenario Outline: The token operations are served at the paths of spec §4.1
    Then the operation <operation> is served at <method> <path>

    Examples:
      | operation             | method | path                                       |
      | GetOwnPartnerTokens   | GET    | /partner/v2/partners/self/tokens           |
      | CreateOwnPartnerToken | POST   | /partner/v2/partners/self/tokens           |
      | RevokePartnerOwnToken | DELETE | /partner/v2/partners/self/tokens/{tokenId} |

  @contract
  Scenario: The documented schemas let responses grow new properties
    When I read the target's OpenAPI document
    Then no response schema of the document forbids properties it does not name

  @contract
  Scenario Outline: An earlier path is no longer served: <method> <path>
    Given a user "Jane's Bakery"
    When I call the removed path <method> <path>
    Then the path is not served

    Examples:
      | method | path                               |
      | GET    | /users/{name}                      |
      | DELETE | /users/{name}                      |
      | GET    | /users/{id}/token                  |
      | PATCH  | /partners                          |
      | POST   | /webhooks/test-events              |
      | POST   | /webhooks/test-account-type-events |
      | POST   | /webhooks/test-account-events      |
      | POST   | /webhooks/test-import-events       |

  @sandbox
  Scenario Outline: The simulator answers an earlier path with 404 and ProblemDetails: <method> <path>
    Given a user "Jane's Bakery"
    When I call the removed path <method> <path>
    Then the answer is a problem with status 404

    Examples:
      | method | path              |
      | GET    | /users/{name}     |
      | GET    | /users/{id}/token |
      | PATCH  | /partners         |

  @contract
  Scenario: Deleting a user by its name does not delete it
    Given a user "Jane's Bakery"
    When I call the removed path DELETE /users/{name}
    And I list my users
    Then the user "Jane's Bakery" is listed without deletedAt
