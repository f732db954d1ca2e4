"""Ids in the deployment's form: what a profiled simulator shows for its own UUIDs, and takes back.

Per kind of record, the form the profile learned (profile_learn.id_form): integers (numbered per world and kind
in the order the partner first sees them, models.py), or a prefix (`usr_`) before the UUID itself, a number, or
a string of the deployment's alphabet and length. A string long enough to hold a UUID is the UUID re-encoded, so
it needs no table; a shorter one is a number re-encoded. Either way a shown id means one record of one world,
before and after a restart; an id of the right form that no record was shown as stands for no record (the
simulator's not-found), one of another form is malformed.
"""

import re
import uuid

from ptas_sandbox.profile import ALPHABETS, KEY_KIND, SEGMENT_KIND

from . import models

UUID_TEXT = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
UUID_ONLY = re.compile("^" + UUID_TEXT.pattern + "$")
# Ids of no record: what an id of the right form that was never shown stands for (the simulator answers 404).
NOWHERE = uuid.UUID("6d0b6b3c-9a4e-4f1e-8c55-0f5e1d7c2a90")
MALFORMED = object()


def encode(number, alphabet, length):
    digits = ""
    while number:
        number, digit = divmod(number, len(alphabet))
        digits = alphabet[digit] + digits
    return digits.rjust(length or 1, alphabet[0])


def decode(text, alphabet):
    number = 0
    for char in text:
        number = number * len(alphabet) + alphabet.index(char)
    return number


def key_kind(key):
    return KEY_KIND.get(key) if key.endswith("Id") else None


class Ids:
    def __init__(self, learned, store):
        forms = (learned or {}).get("kinds") or {}
        self.forms = {kind: form for kind, form in forms.items() if form.get("form") in ("integer", "prefixed")}
        # Kinds the run never saw are numbered too where every kind it saw was (a prefix cannot be guessed).
        self.default = next(iter(forms.values())) if forms and all(
            f == next(iter(forms.values())) and f.get("form") == "integer" for f in forms.values()) else None
        self.store = store
        self.shared = (learned or {}).get("sequence") == "shared"     # one sequence numbers every kind

    @property
    def active(self):
        return bool(self.forms)

    def form(self, kind):
        return self.forms.get(kind) or (self.default if kind else None)

    # -- the form of one kind -------------------------------------------------------------------------------
    @staticmethod
    def reencodes(form):
        """Whether the suffix holds the UUID itself (re-encoded), rather than a number."""
        if form["form"] != "prefixed" or form["rest"] == "integer":
            return False
        if form["rest"] == "uuid" or not form.get("length"):
            return True
        return len(ALPHABETS[form.get("alphabet", "base62")]) ** form["length"] >= 2 ** 128

    def shown(self, form, value, number):
        if form["form"] == "integer":
            return number if form.get("json") == "integer" else str(number)
        if form["rest"] == "uuid":
            return form["prefix"] + value
        if form["rest"] == "integer":
            return form["prefix"] + str(number)
        alphabet = ALPHABETS[form.get("alphabet", "base62")]
        return form["prefix"] + encode(uuid.UUID(value).int if number is None else number, alphabet,
                                       form.get("length"))

    def show(self, world, found):
        """{(kind, uuid): as the deployment shows it} for the (kind, uuid) pairs of an answer."""
        out, by_kind = {}, {}
        if world is None and found:         # a hosted page's answer: the world of the records it names
            world = models.world_of(self.store, [str(v) for _, v in found if UUID_ONLY.match(str(v))])
        for kind, value in found:
            form = self.form(kind)
            if form and world and UUID_ONLY.match(str(value)):
                by_kind.setdefault(kind, []).append(str(value))
        for kind, values in by_kind.items():
            form = self.form(kind)
            numbers = {} if self.reencodes(form) else \
                models.numbers_of(self.store, world, self.sequence(kind), values)
            for value in values:
                out[(kind, value)] = self.shown(form, value, numbers.get(value))
        return out

    def back(self, world, kind, text):
        """The UUID an id the partner sent stands for; NOWHERE's kin for one of the right form never shown;
        MALFORMED for one of another form; the text itself where the kind keeps UUIDs."""
        form = self.form(kind)
        if not form:
            return text
        text = str(text)
        number = None
        if form["form"] == "integer":
            if not text.isdigit():
                return MALFORMED
            number = int(text)
        else:
            prefix = form["prefix"]
            if not text.startswith(prefix):
                return MALFORMED
            rest = text[len(prefix):]
            if form["rest"] == "uuid":
                return rest.lower() if UUID_ONLY.match(rest) else MALFORMED
            if form["rest"] == "integer":
                if not rest.isdigit():
                    return MALFORMED
                number = int(rest)
            else:
                alphabet = ALPHABETS[form.get("alphabet", "base62")]
                if not rest or any(c not in alphabet for c in rest) or \
                        (form.get("length") and len(rest) != form["length"]):
                    return MALFORMED
                number = decode(rest, alphabet)
                if self.reencodes(form):
                    return str(uuid.UUID(int=number)) if number < 2 ** 128 else self.nowhere(world, kind, text)
        found = models.uuid_of(self.store, world, self.sequence(kind), number) if world else None
        return found or self.nowhere(world, kind, text)

    def sequence(self, kind):
        return "*" if self.shared else kind

    @staticmethod
    def nowhere(world, kind, text):
        return str(uuid.uuid5(NOWHERE, f"{world}/{kind}/{text}"))

    # -- walks ----------------------------------------------------------------------------------------------
    def answer(self, world, kind, body, literals):
        """A JSON answer with every id of a record (by its kind: the record's own `id`, a `userId`, the entries
        of a list) in the deployment's form; `literals`: ids the request named that stand for no record."""
        found = []
        visit(body, kind, lambda k, v: found.append((k, v)) or v)
        shown = self.show(world, found)
        body = visit(body, kind, lambda k, v: shown.get((k, str(v)), v))
        return self.texts(world, body, literals)

    def texts(self, world, value, literals):
        """Ids inside strings (a problem's `instance` and `detail`, a link): by the path segment before them."""
        if isinstance(value, dict):
            return {k: self.texts(world, v, literals) for k, v in value.items()}
        if isinstance(value, list):
            return [self.texts(world, v, literals) for v in value]
        return self.text(world, value, literals) if isinstance(value, str) else value

    def text(self, world, text, literals, kind=None):
        """Ids inside a string: after the path segment that names their kind (`/users/…`), or as the value of a
        query parameter that does (`userId=…`; `sessionId=…` of `kind`, the record the operation answers)."""
        if not UUID_TEXT.search(text):
            return text
        pattern = r"(?:/([a-z]+)/|([A-Za-z]+)=)?(" + UUID_TEXT.pattern + ")"

        def kind_of(match):
            segment, parameter = match.group(1), match.group(2)
            if segment:
                return SEGMENT_KIND.get(segment)
            return kind if parameter == "sessionId" else key_kind(parameter or "")
        pairs = [(kind_of(m), m.group(3)) for m in re.finditer(pattern, text)]
        shown = self.show(world, [(k, v) for k, v in pairs if k and v not in literals])

        def one(match):
            value = match.group(3)
            before = match.group(0)[:-len(value)]
            if value in literals:
                return before + literals[value]
            return before + str(shown.get((kind_of(match), value), value))
        return re.sub(pattern, one, text)

    def request(self, world, body, literals):
        """A request body with the ids it refers to (`userId`, `accountId`, ...) back in the simulator's UUIDs."""
        def back(kind, value):
            found = self.back(world, kind, value)
            if found is MALFORMED:
                return value
            if found != value and self.form(kind):
                literals[found] = str(value)
            return found
        return visit(body, None, back, own=False)

    def notification(self, world, body):
        """A webhook notification's data in the deployment's form (its own id is the event's, not a record's)."""
        if isinstance(body, dict) and "data" in body:
            return {**body, "data": self.answer(world, None, body["data"], {})}
        return body


def visit(value, kind, fn, own=True):
    """`value` with fn(kind, id) in place of each id a record holds or refers to (`own`: a record's `id` too)."""
    if isinstance(value, dict):
        out = {}
        for key, member in value.items():
            target = (kind if key == "id" and own else None) or key_kind(key)
            if target and isinstance(member, (str, int)) and not isinstance(member, bool):
                out[key] = fn(target, member)
            else:
                inner = KEY_KIND.get(key) or SEGMENT_KIND.get(key.lower()) or (
                    kind if isinstance(member, list) else None)
                out[key] = visit(member, inner, fn, own)
        return out
    if isinstance(value, list):
        return [visit(v, kind, fn, own) for v in value]
    return value
