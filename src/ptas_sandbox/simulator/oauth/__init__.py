"""The OAuth2 account connection flow (spec §1 "OAuth2 account creation flow", §4.2 note 5, §7.3)."""
