@auth @spec-5
Feature: The scope table
  Each scope of spec §5 rule 7 allows what its row grants and nothing more; a missing scope is 403 with
  ProblemDetails (spec §4.1 rule 3, §7 rules 1 and 2).

  Background:
    Given a partner

  @contract
  Scenario Outline: <scope> <outcome> for <operation>
    Given a token holding only "<scope>"
    When that token calls <operation>
    Then the call is <outcome>

    Examples: partner:all, all actions on the partner and child partners
      | scope       | operation             | outcome   |
      | partner:all | GetOwnPartner         | allowed   |
      | partner:all | UpdatePartner         | allowed   |
      | partner:all | CreatePartner         | allowed   |
      | partner:all | GetPartners           | allowed   |
      | partner:all | DeleteChildPartner    | allowed   |
      | partner:all | GetOwnPartnerTokens   | allowed   |
      | partner:all | CreateOwnPartnerToken | allowed   |
      | partner:all | CreatePartnerToken    | allowed   |
      | partner:all | GetUsers              | forbidden |
      | partner:all | CreateUser            | forbidden |

    Examples: partner:read, read partner information including the child partners
      | scope        | operation             | outcome   |
      | partner:read | GetOwnPartner         | allowed   |
      | partner:read | GetPartners           | allowed   |
      | partner:read | GetPartner            | allowed   |
      | partner:read | GetOwnPartnerTokens   | allowed   |
      | partner:read | GetPartnerTokens      | allowed   |
      | partner:read | UpdatePartner         | forbidden |
      | partner:read | CreatePartner         | forbidden |
      | partner:read | DeleteChildPartner    | forbidden |
      | partner:read | CreateOwnPartnerToken | forbidden |
      | partner:read | GetUsers              | forbidden |

    Examples: partner:create, create child partners and tokens for them
      | scope          | operation          | outcome   |
      | partner:create | CreatePartner      | allowed   |
      | partner:create | GetPartners        | forbidden |
      | partner:create | UpdatePartner      | forbidden |
      | partner:create | DeleteChildPartner | forbidden |
      | partner:create | CreateUser         | forbidden |
      | partner:create | GetPartnerTokens   | forbidden |

    Examples: partner:update, update partner information and create own partner tokens
      | scope          | operation             | outcome   |
      | partner:update | UpdatePartner         | allowed   |
      | partner:update | UpdateChildPartner    | allowed   |
      | partner:update | CreateOwnPartnerToken | allowed   |
      | partner:update | GetOwnPartnerTokens   | forbidden |
      | partner:update | GetOwnPartner         | forbidden |
      | partner:update | CreatePartner         | forbidden |
      | partner:update | DeleteChildPartner    | forbidden |
      | partner:update | GetPartnerTokens      | forbidden |

    Examples: partner:delete, delete child partners
      | scope          | operation          | outcome   |
      | partner:delete | DeleteChildPartner | allowed   |
      | partner:delete | GetPartners        | forbidden |
      | partner:delete | CreatePartner      | forbidden |
      | partner:delete | UpdatePartner      | forbidden |

    Examples: user:all, all actions on users
      | scope    | operation       | outcome   |
      | user:all | GetUsers        | allowed   |
      | user:all | GetUser         | allowed   |
      | user:all | CreateUser      | allowed   |
      | user:all | UpdateUser      | allowed   |
      | user:all | DeleteUser      | allowed   |
      | user:all | CreateUserToken | allowed   |
      | user:all | GetOwnPartner   | forbidden |
      | user:all | CreatePartner   | forbidden |

    Examples: user:read, read and list users
      | scope     | operation       | outcome   |
      | user:read | GetUsers        | allowed   |
      | user:read | GetUser         | allowed   |
      | user:read | CreateUser      | forbidden |
      | user:read | UpdateUser      | forbidden |
      | user:read | DeleteUser      | forbidden |
      | user:read | CreateUserToken | forbidden |

    Examples: user:create, create users and user tokens
      | scope       | operation       | outcome   |
      | user:create | CreateUser      | allowed   |
      | user:create | CreateUserToken | allowed   |
      | user:create | GetUsers        | forbidden |
      | user:create | UpdateUser      | forbidden |
      | user:create | DeleteUser      | forbidden |

    Examples: user:update, update users
      | scope       | operation       | outcome   |
      | user:update | UpdateUser      | allowed   |
      | user:update | GetUsers        | forbidden |
      | user:update | CreateUser      | forbidden |
      | user:update | DeleteUser      | forbidden |
      | user:update | CreateUserToken | forbidden |

    Examples: user:delete, delete users
      | scope       | operation       | outcome   |
      | user:delete | DeleteUser      | allowed   |
      | user:delete | GetUsers        | forbidden |
      | user:delete | CreateUser      | forbidden |
      | user:delete | UpdateUser      | forbidden |
      | user:delete | CreateUserToken | forbidden |

    Examples: user.token:create on a partner token, create user tokens
      | scope             | operation       | outcome   |
      | user.token:create | CreateUserToken | allowed   |
      | user.token:create | CreateUser      | forbidden |
      | user.token:create | GetUsers        | forbidden |

    Examples: account:all on a partner token, all actions on accounts
      | scope       | operation       | outcome   |
      | account:all | CreateAccount   | allowed   |
      | account:all | GetAccounts     | allowed   |
      | account:all | GetAccount      | allowed   |
      | account:all | UpdateAccount   | allowed   |
      | account:all | DeleteAccount   | allowed   |
      | account:all | GetTransactions | forbidden |
      | account:all | GetOwnPartner   | forbidden |
      | account:all | CreateUser      | forbidden |

    Examples: account:read, account:create, account:update, account:delete on a partner token
      | scope          | operation     | outcome   |
      | account:read   | GetAccounts   | allowed   |
      | account:read   | GetAccount    | allowed   |
      | account:read   | CreateAccount | forbidden |
      | account:read   | UpdateAccount | forbidden |
      | account:read   | DeleteAccount | forbidden |
      | account:create | CreateAccount | allowed   |
      | account:create | GetAccounts   | forbidden |
      | account:create | DeleteAccount | forbidden |
      | account:update | UpdateAccount | allowed   |
      | account:update | GetAccounts   | forbidden |
      | account:update | CreateAccount | forbidden |
      | account:delete | DeleteAccount | allowed   |
      | account:delete | GetAccount    | forbidden |
      | account:delete | UpdateAccount | forbidden |

    Examples: the OAuth2 flow's first step authorizes an account: account:create, "create and authorize accounts"
      | scope          | operation              | outcome   |
      | account:create | CreateOauthRedirectUrl | allowed   |
      | account:all    | CreateOauthRedirectUrl | allowed   |
      | account:read   | CreateOauthRedirectUrl | forbidden |
      | account:delete | CreateOauthRedirectUrl | forbidden |

    Examples: transaction scopes on a partner token, read and list transactions
      | scope            | operation       | outcome   |
      | transaction:all  | GetTransactions | allowed   |
      | transaction:all  | GetAccounts     | forbidden |
      | transaction:all  | GetUsers        | forbidden |
      | transaction:read | GetTransactions | allowed   |
      | transaction:read | CreateAccount   | forbidden |
      | transaction:read | UpdatePartner   | forbidden |

    Examples: userui:create and userui:read, user UI sessions
      | scope         | operation           | outcome   |
      | userui:create | CreateUserUiSession | allowed   |
      | userui:create | GetUserUiSession    | forbidden |
      | userui:create | GetUsers            | forbidden |
      | userui:read   | GetUserUiSession    | allowed   |
      | userui:read   | CreateUserUiSession | forbidden |

  @contract
  Scenario Outline: A user token holding <scope> <outcome> for <operation>
    Given a user whose token holds only "<scope>"
    When that token calls <operation>
    Then the call is <outcome>

    Examples: account and transaction scopes are the ones a user token holds
      | scope            | operation       | outcome   |
      | account:all      | CreateAccount   | allowed   |
      | account:all      | GetAccounts     | allowed   |
      | account:all      | DeleteAccount   | allowed   |
      | account:all      | GetTransactions | forbidden |
      | account:read     | GetAccounts     | allowed   |
      | account:read     | GetAccount      | allowed   |
      | account:read     | CreateAccount   | forbidden |
      | account:read     | UpdateAccount   | forbidden |
      | account:create   | CreateAccount   | allowed   |
      | account:create   | GetAccounts     | forbidden |
      | account:update   | UpdateAccount   | allowed   |
      | account:update   | DeleteAccount   | forbidden |
      | account:delete   | DeleteAccount   | allowed   |
      | account:delete   | GetAccounts     | forbidden |
      | transaction:read | GetTransactions | allowed   |
      | transaction:read | GetAccounts     | forbidden |
      | transaction:all  | GetTransactions | allowed   |
      | transaction:all  | CreateAccount   | forbidden |

    Examples: a user token's account:create authorizes an account in the OAuth2 flow's first step
      | scope          | operation              | outcome   |
      | account:create | CreateOauthRedirectUrl | allowed   |
      | account:read   | CreateOauthRedirectUrl | forbidden |

    Examples: user.token scopes on a user token, its own new token (spec §4.2 note 3)
      | scope             | operation          | outcome   |
      | user.token:create | CreateOwnUserToken | allowed   |
      | user.token:all    | CreateOwnUserToken | allowed   |
      | account:all       | CreateOwnUserToken | forbidden |

    # A scope a token type cannot hold is never satisfied for that type: the partner and user scopes are for
    # Partner and Child-Partner tokens only (§5 rule 7, token types column), so a user token, with the widest
    # scopes it can hold, lacks what these operations require: 403 (§7 rule 1). The user token is valid (it is
    # allowed its own rows above), so the refusal is for its scope, not its authentication: 403, not 401.
    Examples: a user token holds no partner or user scope, so what only those grant is forbidden to it
      | scope           | operation     | outcome   |
      | account:all     | GetUsers      | forbidden |
      | user.token:all  | GetUsers      | forbidden |
      | transaction:all | CreateUser    | forbidden |
      | account:all     | GetOwnPartner | forbidden |
      | transaction:all | GetPartners   | forbidden |

  @sandbox
  Scenario Outline: The simulator lets <scope> make tokens for child partners: <outcome> for <operation>
    Spec §5 contradicts itself here: partner:create "creates tokens for child partners" (rule 7), yet a deploy
    token (only partner:create) whose system lost its token needs the main partner for a new one (rule 4).
    Given a token holding only "<scope>"
    When that token calls <operation>
    Then the call is <outcome>

    Examples: partner:create on a child partner the token created
      | scope          | operation          | outcome |
      | partner:create | CreatePartnerToken | allowed |
