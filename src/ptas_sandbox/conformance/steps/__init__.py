"""Step definitions, one module per spec area (`tokens.py` for features/tokens/, ...) plus `common.py`.

Every module here is loaded by the harness plugin (`harness.py` walks this package): a new area needs only its
file. A step that anyone can take is written once, with `{actor}` in the third person; `acting` makes it match
the "I" form too:

    @when(acting('{actor} reads the account "{label}"'))
    def read_account(scene, actor, label): ...

matches both `"Jane's Bakery" reads the account "shop"` and `I read the account "shop"` (actor "I").
"""

import pkgutil
import re

import parse
from pytest_bdd import parsers
from pytest_bdd.parsers import StepParser

IRREGULAR = {"has": "have", "is": "am", "does": "do", "goes": "go"}
# A quoted value never runs past its closing quote: `revokes the token "{name}"` does not swallow
# `"a" of the child partner "b"`.
QUOTED = {"Q": parse.with_pattern(r'[^"]*')(lambda text: text)}


def modules():
    """The step modules of this package, by name (private helpers start with `_`)."""
    return [info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_")]


def first_person(verb):
    """`reads` -> `read`, `tries` -> `try`, `changes` -> `change`, `pushes` -> `push`."""
    if verb in IRREGULAR:
        return IRREGULAR[verb]
    if verb.endswith("ies"):
        return verb[:-3] + "y"
    if verb.endswith(("ches", "shes", "sses", "xes", "zes")):
        return verb[:-2]
    return verb[:-1] if verb.endswith("s") else verb


def quoted(pattern):
    return re.sub(r'"\{(\w+)\}"', r'"{\1:Q}"', pattern)


def phrase(text):
    """A step's words with `{placeholders}` (parse syntax); a quoted placeholder stops at its closing quote, so
    `a user "{label}"` never matches `a user "Max" with a "dummy" account "shop"`."""
    return parsers.parse(quoted(text), extra_types=QUOTED)


class acting(StepParser):
    """`{actor} <verb>s ...` said by a named token or user (`"name" reads ...`) or by me (`I read ...`).

    The "I" form conjugates the verb and says `my` for `the partner's`; `me=` gives it outright where English
    needs more (`I read my partner settings`). The step function receives `actor`: "I" or the quoted name.
    """

    def __init__(self, phrase, me=None):
        super().__init__(phrase)
        head, verb, rest = phrase.split(" ", 2)
        if head != "{actor}":
            raise ValueError(f"an acting step starts with {{actor}}: {phrase!r}")
        mine = "I " + (me or f"{first_person(verb)} {rest}".replace("the partner's ", "my "))
        self.them = parse.compile(quoted(f'"{{actor}}" {verb} {rest}'), QUOTED)
        self.me = parse.compile(quoted(mine), QUOTED)

    def parse_arguments(self, name):
        found = self.them.parse(name)
        if found is not None:
            return dict(found.named)
        found = self.me.parse(name)
        return None if found is None else {**found.named, "actor": "I"}

    def is_matching(self, name):
        try:
            return self.parse_arguments(name) is not None
        except ValueError:
            return False


def page_form(scene, path):
    """The hidden fields of a hosted page's form (its CSRF token), loaded as a browser would before posting:
    the page sets the cookie the token is bound to, and the client keeps it."""
    page = scene.client.request("GET", path, headers={"Accept": "text/html"}, record=False)
    return dict(re.findall(r'<input type="hidden" name="(csrfToken)" value="([^"]*)"', page.text or "")[:1])
