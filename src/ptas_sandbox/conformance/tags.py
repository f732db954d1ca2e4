"""The tags of features/ (docs/design.md): kinds, spec areas, and what a target needs to run a scenario."""

import re

import pytest

KINDS = {
    "contract": "asserts only what the interface specification guarantees; runs against any target",
    "sandbox": "needs the simulator's control API or asserts a choice the simulator made where the spec is silent",
    "slow": "needs real waiting on a target without a movable clock; opt-in there (--slow)",
}
AREAS = {
    "tokens": "§2, §3, §4.1 tokens", "partners": "§1, §4.2 partners and child partners",
    "users": "§4.2, §5.6 users and user tokens", "accounts": "§4.3 accounts",
    "account_types": "§1, §2 account types", "oauth": "§1 OAuth2 account creation flow",
    "transactions": "§4.3 transactions", "reports": "§4.3 reports", "dataimports": "§4.2 data imports",
    "accountui": "§4.2 Account UI sessions", "userui": "§4.2 User UI sessions",
    "webhooks": "§6 webhooks and test events", "auth": "§5, §7 authentication, scopes, errors",
    "limits": "§8 limits", "versioning": "§9 versioning and timestamps",
}
DESELECTED = pytest.StashKey[str]()


def markers():
    """Marker lines for pytest's `markers` ini value (--strict-markers needs every tag registered)."""
    return [f"{name}: {text}" for name, text in {**KINDS, **{a: f"spec area {t}" for a, t in AREAS.items()}}.items()]


def names():
    return [*KINDS, *AREAS]


def unknown_in(expression):
    """Tags of a --tags expression that no feature can carry (`@` prefixes allowed, as Cucumber writes them)."""
    words = re.findall(r"[@\w.-]+", expression)
    return [w for w in words if w.lstrip("@") not in names() and w not in ("and", "or", "not")]


def is_scenario(item):
    return "_pytest_bdd_example" in getattr(item, "fixturenames", ())


def area_of(item):
    for name in AREAS:
        if item.get_closest_marker(name) is not None:
            return name
    return "other"


def unsuitable(item, *, simulator, slow):
    """Why a scenario cannot run on a target, or None when it can."""
    if simulator:
        return None
    if item.get_closest_marker("contract") is None:
        return "needs a simulator (control API or simulator choices)"
    if item.get_closest_marker("slow") is not None and not slow:
        return "@slow: waits in real time; opt in with --slow"
    return None
