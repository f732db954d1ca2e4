@userui @spec-4.2
Feature: User UI sessions
  A partner opens a user UI session for graphical user registration and reads its status; creating needs
  userui:create and reading userui:read (spec §4.2 POST /userui, GET /userui/{id}, note 4, §9 2.12.0).

  Background:
    Given a partner

  @contract
  Scenario: A user UI session is opened and read back
    When I open a user UI session
    Then the request succeeds
    When I read the user UI session
    Then the response identifies the session

  @sandbox
  Scenario: The person registers on the session's page and becomes a user
    When I open a user UI session
    And the person registers as "Walk-in Customer" on the session's page
    And I read the user UI session
    Then the session is Completed with a user
