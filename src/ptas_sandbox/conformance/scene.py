"""One scenario's state: who "I" am on the target, the tokens, users and child partners the steps made, the
last reply, and what to undo afterwards on a deployment (the harness removes what it created; on a
simulator, the scenario's world goes).

On a simulator "I" am the root partner of a fresh world; on a deployment "I" am the partner token given to the
run, which is never revoked: steps that revoke make their own tokens first.
"""

import base64
import json
import re
import uuid

import pytest

from .bodies import Bodies, NoSchema, identifier
from .checks import check, ids_of
from .redact import redact

ME = ("I", "me", "my", "the partner")
# Steps in which a token or user changes itself or what the scenario checks of it: never a shared one.
# Scenarios that let time pass or set how long tokens last: their tokens and users are their own.
WAITS_OR_SETS = re.compile(r"\bpass(es)?\b|\bseconds\b|\blast\b|\bwait", re.I)
CHANGES_ITSELF = re.compile(r"revok|delet|renam|expir|lifetime|last used|refresh|issues|token of|own token", re.I)


STEP_TEXTS = pytest.StashKey[list]()      # the rendered step texts of the scenario an item runs


class Precondition(AssertionError):
    """A Given step could not set the stage: the target refused what the scenario needs."""


class Scene:
    def __init__(self, target, node=None, slow_allowed=False):
        self.target = target
        self.client = target.client()
        self.node = node
        self.slow_allowed = slow_allowed
        self.tokens = {}        # name -> {"accessToken", "record", "owner"}
        self.users = {}         # name -> {"id", "accessToken", "token", "body"}
        self.partners = {}      # name -> child partner record
        self.accounts = {}      # name -> account record
        self.account_kinds = {}  # name -> (account type, owner's label) of an account this scenario created
        self.webhooks = {}      # name -> webhook record
        self.account_types = {}  # id -> account type, read once
        self.reply = None
        self.replies = []       # replies of When steps, for checks over several of them
        self.undo = []
        self.undo_keys = {}     # ("user" | "account", label) -> its action in `undo`, for `hold`
        self.settings_kept = False   # the partner's settings are put back at the end (a deployment)
        self.holding = False         # an account of this world is held for later scenarios: the world stays
        self.scope_session = None    # the user UI session the scope table reads
        self.pending = {}            # label -> how to make a Given user or account on its first use (realize)
        self.gone = set()            # ids the scenario itself deleted: its clean-up leaves them be
        # Values that flow from one step to the next (a page's transactions, an OAuth2 reference, a session)
        # are pytest fixtures of the steps (`target_fixture`), not attributes of the scene.
        self.suffix = "" if target.simulator else " " + uuid.uuid4().hex[:8]
        if target.simulator:
            self.token, self.world = target.new_world(self.client)
        else:
            self.token, self.world = target.token, None

    # -- who calls -------------------------------------------------------------------------------------------
    def realize(self, label):
        """Make the Given user or account `label` now, if it was left for its first use: on a deployment a
        scenario that reuses an account already holding data never needs the one its Background names."""
        make = self.pending.pop(label, None)
        if make is not None:        # a Given's calls: never "the response" a Then step reads
            reply, replies = self.reply, list(self.replies)
            make()
            self.reply, self.replies[:] = reply, replies
        for account, (_, owner) in list(self.account_kinds.items()):   # a user comes with the accounts it was given
            if owner == label and account in self.pending:
                self.realize(account)

    def bearer(self, actor):
        actor = actor.strip('"')
        self.realize(actor)
        if actor in ME:
            return self.token
        if actor in self.tokens:
            return self.tokens[actor]["accessToken"]
        if actor in self.users:
            return self.users[actor]["accessToken"]
        raise KeyError(f"no token or user called {actor!r} in this scenario")

    def call(self, operation_id, actor="I", **kw):
        """A When-step call: the reply becomes `the response` for the Then steps."""
        token = kw.pop("token") if "token" in kw else self.bearer(actor)
        if operation_id == "RevokePartnerOwnToken" and not self.target.simulator:
            check(kw.get("params", {}).get("tokenId") != token_id_of(self.target.token),
                  "the harness never revokes the token it was given")
        self.reply = self.client.call(operation_id, token=token, **kw)   # NotOffered: the harness skips
        self.replies.append(self.reply)
        if operation_id.startswith("Delete") and self.reply.ok:
            self.gone.add(str((kw.get("params") or {}).get("id")))
        return self.reply

    def undo_delete(self, operation_id, record_id, **kw):
        """The clean-up call deleting `record_id`, unless the scenario deleted it already (one request saved)."""
        if str(record_id) not in self.gone:
            return self.client.call(operation_id, token=self.token, params={"id": record_id}, **kw)
        return None

    # -- payloads the spec does not show ---------------------------------------------------------------------
    @property
    def bodies(self):
        """Request bodies from the target's document (bodies.py)."""
        return Bodies(self.target.operations)

    def body(self, operation, values, optional=()):
        """A request body built from the target's schema for `operation` (bodies.py); NoSchema skips."""
        return self.bodies.build(operation, values, optional)

    def update(self, read, update, params, changes, actor="I", record=None):
        """Read-modify-write: read the whole record (as I; `record` when the scenario has just read it), change it,
        send it back with `update` (as `actor`).

        Holds whether the target's PUT merges or replaces; `changes` are keyed by the spec's words and placed
        on the update schema's properties (a dict value is merged into the record's)."""
        if record is None:
            current = self.must(self.client.call(read, token=self.token, params=params),
                                f"read the record to {update}")
            record = current.body if isinstance(current.body, dict) else {}
        body = self.bodies.writable(update, record)
        for meaning, value in changes.items():
            target = meaning if meaning in body else self.bodies.placement(update, meaning)
            if target is None:
                raise NoSchema(f"{self.target.operations.operation_id(update)}: the target's request schema has "
                               f"no property for {meaning}")
            body[target] = merged(body.get(target), value)
        return self.call(update, actor, params=params, json=body)

    def id_of(self, record, read):
        """The id of a record (a child partner, an account, a session...) under the target's name for it."""
        found = identifier(record, *self.target.operations.hints(read))
        check(found is not None, f"the record carries no id the harness can find for {read} "
                                 f"(properties: {sorted(record) if isinstance(record, dict) else record!r})")
        return found

    def ids_in(self, reply, what, read):
        """The ids of a list's entries (`read`: the operation that reads one entry, for the id's name)."""
        return ids_of(reply, what, *self.target.operations.hints(read))

    def must(self, reply, what):
        """A Given-step call must succeed; otherwise the stage cannot be set (said without showing tokens)."""
        if not reply.ok:
            raise Precondition(redact(f"could not {what}: {reply.describe()}"))
        return reply

    def name(self, label):
        """A label unique on a shared deployment (previous runs may have left a token of the same name)."""
        return label + self.suffix

    # -- tokens ---------------------------------------------------------------------------------------------
    def remember_token(self, name, body, owner="I"):
        self.tokens[name] = {"accessToken": body.get("accessToken"), "record": body, "owner": owner}
        if not self.target.simulator and owner == "I":
            if body.get("id"):
                self.undo.append(lambda: self.client.call("RevokePartnerOwnToken", token=self.token,
                                                          params={"tokenId": body["id"]}))
            else:       # spec §8: no id for a lifetime of an hour or less, so nothing to revoke it by
                self.target.held.left["partner tokens of an hour or less (no id to revoke them by; they expire "
                                      "by themselves)"] += 1
        return self.tokens[name]

    def token_id(self, name):
        record = self.tokens[name]["record"]
        check("id" in record, f"the token {name!r} has no id (its lifetime is one hour or less)")
        return record["id"]

    def listed(self, name, listing=None):
        """The record of a token in a token list, by its id or, for tokens without one, by its name; or None."""
        record = self.tokens[name]["record"]
        for item in listed_tokens(listing or self.reply):
            if record.get("id") and item.get("id") == record["id"]:
                return item
            if not record.get("id") and item.get("name") == record.get("name"):
                return item
        return None

    def find_listed(self, name, listing=None):
        """The record of a token in a token list (listed): one that is not there fails the step."""
        item = self.listed(name, listing)
        if item is None:
            raise AssertionError(f"the token {name!r} is not in the list")
        return item

    # -- time -----------------------------------------------------------------------------------------------
    def time_passes(self, seconds, what=None):
        """Advance the world clock on a simulator; on a deployment really wait, within the run's budget, in a
        @slow scenario of a run that waits (not --quick)."""
        if self.target.simulator:
            reply = self.client.call("SandboxSetClock", token=self.token, json={"advance": seconds})
            self.must(reply, f"move the world clock by {seconds} s")
            return
        self.may_wait()
        refusal = self.target.budget.refusal(seconds, what)
        if refusal:
            pytest.skip(refusal)
        self.target.budget.wait(self.target, seconds)

    def may_wait(self):
        """Skip unless this scenario may wait on a deployment: a @slow scenario, in a run without --quick."""
        slow = self.node is not None and self.node.get_closest_marker("slow") is not None
        if not slow:
            pytest.skip("needs time to pass: only a simulator can move time for a scenario that is not @slow")
        if not self.slow_allowed:
            pytest.skip("@slow: waits for time or data to pass; --quick leaves it out (check with: a run "
                        "without --quick)")

    def hold(self, label):
        """Keep the account `label` (and the user it belongs to) for the rest of the run: later scenarios reuse
        its data instead of waiting again; the run deletes them (on a simulator, their world) at its end."""
        _, owner = self.account_kinds.get(label, (None, None))
        if self.world is not None and not self.holding:     # the world goes once the run is over
            self.target.held.leftovers.insert(0, self.delete_world)
        self.holding = True
        for key in (("user", owner), ("account", label)):
            action = self.undo_keys.pop(key, None)
            if action is not None:
                self.undo.remove(action)
                self.target.held.leftovers.append(action)

    @property
    def step_texts(self):
        """The texts of this scenario's steps (its Background's included), as the feature renders them; None
        outside a scenario (harness.pytest_bdd_before_scenario keeps them)."""
        return None if self.node is None else self.node.stash.get(STEP_TEXTS, None)

    def only_acts(self, label, given):
        """Whether every step of the scenario that names `label` (but its Given, `given`) has it call as an actor
        that changes nothing of it: then one of the run's `label`s of that Given serves (Scene.pooled)."""
        texts = self.step_texts
        if texts is None or any(WAITS_OR_SETS.search(text) for text in texts):
            return False
        quoted = f'"{label}"'
        for text in texts:
            if quoted not in text or text == given:
                continue
            # it calls as an actor, on nobody else ("revokes the token "doomed"" acts on another token) or on
            # something that is not itself ("tries to revoke itself" is itself)
            acts_on_itself = text.count('"') == 2 or text.count(quoted) > 1
            if not text.startswith(quoted + " ") or (acts_on_itself and CHANGES_ITSELF.search(text)):
                return False
        return True

    def pooled(self, key, make, lasting=None):
        """What `make()` makes, shared by every scenario of a deployment run that asks for `key` and does not change
        it (a token of a scope, a user, an account, an account type): made once, undone once at the run's end. On a
        simulator each scenario has its own world, so `make()` runs each time. What lasts `lasting` seconds is made
        again once half of that has passed (a slowly paced run outlives a short token)."""
        if self.target.simulator:
            return make()
        pool = self.target.held.pool
        spent, now = self.target.budget.spent, self.target.monotonic()
        if (key not in pool or pool[key][0] != spent    # after a wait, tokens made before it may have expired
                or (lasting is not None and now - pool[key][2] > lasting / 2)):
            before = len(self.undo)
            made = make()
            moved = self.undo[before:]
            del self.undo[before:]
            for k in [k for k, action in self.undo_keys.items() if action in moved]:
                del self.undo_keys[k]
            self.target.held.leftovers.extend(moved)
            pool[key] = (spent, made, now)
        return pool[key][1]

    def on_close(self, action, key=None):
        """Undo `action` when the scenario ends (a deployment: what the harness created)."""
        self.undo.append(action)
        if key is not None:
            self.undo_keys[key] = action

    # -- clean up -------------------------------------------------------------------------------------------
    def close(self):
        """Undo what the scenario created, newest first; errors here never hide the scenario's own result. A
        second Ctrl-C (the run already stopping) leaves the rest undone, counted in the summary."""
        self.target.held.undo(list(reversed(self.undo)))
        self.undo.clear()
        if self.world is not None and not self.holding:     # a simulator's world: a run leaves none behind
            self.target.held.undo([self.delete_world])

    def delete_world(self):
        self.client.call("SandboxDeleteWorld", token=self.world["worldKey"])


def merged(old, new):
    """`new` over `old`, dicts merged at every depth (a record's uiSettings keeps what the change leaves)."""
    if isinstance(old, dict) and isinstance(new, dict):
        return {**old, **{k: merged(old.get(k), v) for k, v in new.items()}}
    return new


def jwt_claims(jwt):
    """The claims of a JWT as it states them (unverified: the harness only reads what the token says of
    itself); {} for anything that is not a JWT."""
    try:
        payload = jwt.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (AttributeError, IndexError, ValueError):
        return {}
    return claims if isinstance(claims, dict) else {}


def token_id_of(jwt):
    """The token id (`jti`) a JWT carries, when it is a JWT that says; None otherwise."""
    return jwt_claims(jwt).get("jti")


def listed_tokens(reply):
    """The records of a token list: spec §2's `{"tokens": [...]}`, or a bare array for a child partner's list,
    whose shape the spec leaves open ("list of tokens of the child partner")."""
    body = reply.body
    tokens = body.get("tokens") if isinstance(body, dict) else body
    check(reply.ok and isinstance(tokens, list), f"expected a token list, got {reply.describe()}")
    return [t for t in tokens if isinstance(t, dict)]
