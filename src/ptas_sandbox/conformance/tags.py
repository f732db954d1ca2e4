"""The tags of features/ (docs/design.md): kinds, spec areas, and what a target needs to run a scenario."""

import re

import pytest

KINDS = {
    "contract": "asserts only what the interface specification guarantees; runs against any target",
    "sandbox": "needs the simulator's control API or asserts a choice the simulator made where the spec is silent",
    "slow": "needs time or data to pass on a target without a movable clock: waits within --max-wait there",
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
DESELECTED = pytest.StashKey[tuple]()   # ('not applicable' | 'not checked', reason)


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


def unsuitable(item, *, simulator, quick):
    """Why a scenario cannot run on a target, as ("not applicable", reason) when no option of the run would make
    it run there, ("not checked", reason) when one would; None when it can run."""
    if simulator:
        return None
    if item.get_closest_marker("contract") is None:
        return ("not applicable", "needs a simulator (control API or simulator choices): @sandbox")
    if item.get_closest_marker("slow") is not None and quick:
        return ("not checked", "@slow: waits for time or data to pass; --quick leaves it out")
    return None


# On a deployment the scenarios that wait run after the others, the cheap waits first, and the §8 burst last: it
# spends a whole rate-limit window, which nothing after it should have to wait out.
WAITING_ORDER = {"tokens": 1, "transactions": 2, "reports": 3, "versioning": 3}


def run_order(item):
    if item.get_closest_marker("limits") is not None:
        return 9
    if item.get_closest_marker("slow") is None:
        return 0
    return WAITING_ORDER.get(area_of(item), 4)
