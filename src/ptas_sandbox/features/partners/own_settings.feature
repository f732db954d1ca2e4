@partners @spec-1
Feature: A partner's own settings
  A partner reads and updates its e-mail address, its OAuth2 redirect URLs and its UI settings
  (spec §1 capability 1, §2 partner resource, §4.2 GET and PUT /partners/self).

  Background:
    Given a partner

  @contract
  Scenario: The settings show what the spec names
    When I read my partner settings
    Then the settings show an e-mail address, redirect URLs, a name, the user token lifetime and UI settings

  @contract
  Scenario: The UI settings carry the Account UI styling
    When I read my partner settings
    Then the settings carry uiSettings.styling

  @contract
  Scenario: The e-mail address can be changed
    When I change my e-mail address to "integrations@acme.example"
    Then the request succeeds
    When I read my partner settings
    Then the settings show the e-mail address "integrations@acme.example"

  # Spec §2: the partner's name is changeable, "including for child partners": so the partner's own first.
  @contract
  Scenario: The partner's own name can be changed, and only the name
    When I rename myself to "Acme Payments"
    Then the request succeeds
    When I read my partner settings
    Then the partner is named "Acme Payments"
    And the other settings are as they were

  @contract
  Scenario: Several OAuth2 redirect URLs can be set
    When I set my redirect URLs to "https://acme.example/oauth/done" and "https://acme.example/oauth/again"
    Then the request succeeds
    When I read my partner settings
    Then the settings show the redirect URLs "https://acme.example/oauth/done" and "https://acme.example/oauth/again"

  @sandbox
  Scenario: The Account UI styling is kept
    When I set my Account UI styling to primary colour "#0b5fff"
    Then the request succeeds
    When I read my partner settings
    Then the settings show the Account UI styling primary colour "#0b5fff"

  @contract
  Scenario: A token with only partner:read cannot change the settings
    Given a token "reader" with scope "partner:read"
    When "reader" changes the e-mail address to "evil@example.test"
    Then the request is refused as forbidden
