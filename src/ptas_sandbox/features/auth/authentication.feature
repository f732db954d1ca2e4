@auth @spec-5
Feature: Bearer tokens and ProblemDetails on 401
  Every call carries "Authorization: Bearer <JWT>"; API keys no longer exist; a missing or bad token gets 401
  with a ProblemDetails body (spec §5 rule 1, §7 rule 2, §9 2.8.0).

  Background:
    Given a partner

  @contract
  Scenario: A call without a token is refused with ProblemDetails
    When I read my partner settings without a token
    Then the request is refused as unauthorized

  @contract
  Scenario Outline: A call with something other than a bearer JWT is refused with ProblemDetails
    When I read my partner settings with the Authorization header "<value>"
    Then the request is refused as unauthorized

    Examples:
      | value                       |
      | Basic cGFydG5lcjpzZWNyZXQ=  |
      | Bearer not-a-jwt            |
      | Bearer                      |
      | Token eyJhbGciOiJIUzI1NiJ9  |

  @contract
  Scenario: A token with an altered signature is refused
    When I read my partner settings with a token whose signature was altered
    Then the request is refused as unauthorized

  @contract
  Scenario: Partner authentication with API keys no longer exists
    When I read my partner settings with an API key instead of a bearer token
    Then the request is refused as unauthorized

  @contract
  Scenario: A missing scope is answered 403 with ProblemDetails
    Given a token "updater" with scope "partner:update"
    When "updater" lists the partner's tokens
    Then the request is refused as forbidden

  @sandbox
  Scenario: The simulator's problems name their kind
    When I read my partner settings without a token
    Then the answer is a problem with status 401
    And the problem type ends with ":unauthorized"

  @sandbox
  Scenario: A user token is refused by a partner operation
    When a user token reads the partner's settings
    Then the answer is a problem with status 403
    And the problem type ends with ":forbidden"
