"""Operation resolver: steps name operations; the spec and the target's OpenAPI document say where they live.

The spec is the authority. An operation the spec gives a method and path (§4.1, §4.2) is found by that method
and path in the target's document, whatever the document calls it (its operationId only breaks a tie); the
version prefix of paths outside /partner/v2 is not shown, so a path is matched at its end. An operation the
spec names without a path (§4.3) is found by its operationId, then by an `--operation NAME=METHOD PATH`
override. What cannot be found is `NotOffered`: the harness skips the scenario with the reason, never fails it.
Service operations never resolve into the simulator's control API (`/_sandbox/...`).

`--openapi` supplies a document (a file path or URL) for a target that does not serve one.
"""

import json
import re
from urllib.parse import quote, urlsplit

METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
CONTROL_PREFIX = "/_sandbox"

# Every operation the spec gives a method and path, by the name the steps use (the spec's where it has one).
SPEC_PATHS = {
    # §4.1
    "GetOwnPartnerTokens": ("GET", "/partner/v2/partners/self/tokens"),
    "CreateOwnPartnerToken": ("POST", "/partner/v2/partners/self/tokens"),
    "RevokePartnerOwnToken": ("DELETE", "/partner/v2/partners/self/tokens/{tokenId}"),
    "GetPartnerTokens": ("GET", "/partners/{id}/tokens"),
    "CreatePartnerToken": ("POST", "/partners/{id}/tokens"),
    "RevokePartnerToken": ("DELETE", "/partners/{id}/tokens/{tokenId}"),
    # §4.2
    "CreatePartner": ("POST", "/partners"),
    "GetOwnPartner": ("GET", "/partners/self"),
    "UpdatePartner": ("PUT", "/partners/self"),
    "GetPartner": ("GET", "/partners/{id}"),
    "UpdateChildPartner": ("PUT", "/partners/{id}"),
    "CreateUser": ("POST", "/users"),
    "GetUser": ("GET", "/users/{id}"),
    "CreateUserToken": ("POST", "/users/{id}/tokens"),
    "CreateOwnUserToken": ("POST", "/users/self/tokens"),
    "CreateAccountUiSession": ("POST", "/accountui"),
    "GetAccountUiSession": ("GET", "/accountui/{id}"),
    "CreateUserUiSession": ("POST", "/userui"),
    "GetUserUiSession": ("GET", "/userui/{id}"),
    "GetDataImports": ("GET", "/dataimports"),
    "GetDataImport": ("GET", "/dataimports/{id}"),
    "CreateWebhook": ("POST", "/webhooks"),
    "GetWebhooks": ("GET", "/webhooks"),
    "GetWebhook": ("GET", "/webhooks/{id}"),
    "UpdateWebhook": ("PUT", "/webhooks/{id}"),
    "PatchWebhook": ("PATCH", "/webhooks/{id}"),
    "DeleteWebhook": ("DELETE", "/webhooks/{id}"),
    "SendTestAccountTypeUpdated": ("POST", "/testevents/accounttypeupdated"),
    "SendTestAccountCreated": ("POST", "/testevents/accountcreated"),
    "SendTestAccountUpdated": ("POST", "/testevents/accountupdated"),
    "SendTestAccountDeleted": ("POST", "/testevents/accountdeleted"),
    "SendTestTransactionsImported": ("POST", "/testevents/transactionsimported"),
    # §4.2 note 5: "the POST /oauth request of the OAuth2 flow (CreateOauthRedirectUrl)"
    "CreateOauthRedirectUrl": ("POST", "/oauth"),
}

# The operations the spec names without a path (§4.3) that the steps use, each with the method and the end of the
# path its resource makes plain (the collection, its item, a sub-collection). Such a shape is only a way to find
# the operation in a target's document when its operationId differs and no --operation names it: it is taken
# when exactly one operation of the document has it (segments compared without case, `-` or `_`), never chosen
# between several.
PATHLESS = {
    "GetUsers": ("GET", "/users"), "UpdateUser": ("PUT", "/users/{id}"), "DeleteUser": ("DELETE", "/users/{id}"),
    "GetPartners": ("GET", "/partners"), "DeleteChildPartner": ("DELETE", "/partners/{id}"),
    "CreateAccount": ("POST", "/accounts"), "GetAccounts": ("GET", "/accounts"),
    "GetAccount": ("GET", "/accounts/{id}"), "UpdateAccount": ("PUT", "/accounts/{id}"),
    "DeleteAccount": ("DELETE", "/accounts/{id}"), "TriggerAccountRefresh": ("POST", "/accounts/{id}/refresh"),
    "CreateAccountOauthRedirectUrl": ("POST", "/accounts/{id}/oauth"),
    "GetAccountTypes": ("GET", "/accounttypes"), "GetAccountType": ("GET", "/accounttypes/{id}"),
    "GetTransactions": ("GET", "/accounts/{id}/transactions"),
    "GetTransaction": ("GET", "/accounts/{id}/transactions/{transactionId}"),
    "GetReports": ("GET", "/accounts/{id}/reports"), "GetReport": ("GET", "/reports/{id}"),
}

# The simulator's control API lives at fixed paths (docs/design.md), whatever a document says of the service.
CONTROL = {"SandboxCreatePartner": ("POST", "/_sandbox/partners"), "SandboxGetClock": ("GET", "/_sandbox/clock"),
           "SandboxSetClock": ("POST", "/_sandbox/clock"), "SandboxFlushWebhooks": ("POST", "/_sandbox/webhooks/flush"),
           "SandboxEchoCaptures": ("GET", "/_sandbox/echo/{bin}"),
           "SandboxDeleteWorld": ("DELETE", "/_sandbox/world")}


class NotOffered(LookupError):
    """The target does not offer what a step needs, as far as its document tells: the scenario is skipped."""


class UnknownOperation(NotOffered):
    """The target's document has no such operation (and no override names it)."""


def shape(path):
    """A path with its parameters blanked: `/users/{userId}` and `/users/{id}` have one shape."""
    return re.sub(r"{[^}/]+}", "{}", path.rstrip("/") or "/")


def skeleton(path):
    """A path's shape with its literal segments compared loosely: `/Account-Types/{x}` ~ `/accounttypes/{id}`."""
    return re.sub(r"[-_]", "", shape(path).lower())


def parse_override(text):
    """`NAME=METHOD PATH` (the runner's --operation, or a line of --operations FILE, `--operation ` allowed before
    it) -> (NAME, (METHOD, PATH))."""
    text = re.sub(r"^\s*--operation\s+", "", text or "")
    match = re.fullmatch(r"\s*['\"]?(\w+)\s*=\s*([A-Za-z]+)\s+(/[^\s'\"]*)['\"]?\s*", text)
    if not match:
        raise ValueError(f"--operation takes NAME=METHOD PATH (e.g. GetAccounts=GET /v2/accounts), not {text!r}")
    return match.group(1), (match.group(2).upper(), match.group(3))


class Operations:
    def __init__(self, document, overrides=None):
        self.document = document
        base = ""
        servers = document.get("servers") or []
        if servers and isinstance(servers[0], dict):
            base = urlsplit(servers[0].get("url", "")).path.rstrip("/")
        self.base = base
        self.overrides = dict(overrides or {})
        self.entries = []               # (METHOD, full path, operation object) for every operation of the document
        self.by_id = {}
        for path, item in (document.get("paths") or {}).items():
            if not isinstance(item, dict):
                continue
            for method, spec in item.items():
                if method in METHODS and isinstance(spec, dict):
                    full = path if not base or path.startswith(base + "/") else base + path
                    entry = (method.upper(), full, spec)
                    self.entries.append(entry)
                    if spec.get("operationId"):
                        self.by_id.setdefault(spec["operationId"], entry)
        self._found = {}
        self.inferred = {}              # name -> (METHOD, path): found by PATHLESS's shape, said in the output

    def __contains__(self, operation_id):
        try:
            self.locate(operation_id)
        except NotOffered:
            return False
        return True

    # -- finding an operation -----------------------------------------------------------------------------
    def locate(self, name):
        """(METHOD, path template with the spec's parameter names, operation object or {})."""
        if name not in self._found:
            self._found[name] = self._locate(name)
        return self._found[name]

    def hints(self, name):
        """The names the target's document gives the path parameters of an operation (`{accountId}`), last
        first (the record's own id before its parent's): what it calls a record's id, where the spec shows none."""
        try:
            method, template, spec = self.locate(name)
        except NotOffered:
            return []
        raw = next((p for m, p, s in self.entries if s is spec and m == method), template)
        return re.findall(r"{([^}/]+)}", raw)[::-1]

    def _locate(self, name):
        if name in CONTROL:
            return (*CONTROL[name], {})
        if name in SPEC_PATHS:
            found = self._by_spec_path(name, *SPEC_PATHS[name])
            if found:
                return found
        elif name in self.by_id and not self._control(self.by_id[name][1]):
            return self.by_id[name]
        if name in self.overrides:
            method, path = self.overrides[name]
            return method, path, self._entry_at(method, path) or {}
        candidates = self.candidates(name)
        if len(candidates) == 1:
            method, path, spec = candidates[0]
            self.inferred[name] = (method, path)
            return method, rename_parameters(path, PATHLESS[name][1]), spec
        if name in SPEC_PATHS:
            method, path = SPEC_PATHS[name]
            raise UnknownOperation(f"the target's document has no {method} …{path} ({name}, spec §4); "
                                   f"name it with --operation {name}=METHOD PATH")
        among = f" (candidates: {', '.join(f'{m} {p}' for m, p, _ in candidates)})" if candidates else ""
        raise UnknownOperation(f"the target's document has no operation {name!r} (the spec shows no path for it)"
                               f"{among}; name it with --operation {name}=METHOD PATH")

    def candidates(self, name):
        """The document's operations with the method and shape PATHLESS gives `name`, leaving out the control API
        and operations whose operationId is another name the harness knows."""
        if name not in PATHLESS:
            return []
        method, end = PATHLESS[name]
        known = set(SPEC_PATHS) | set(PATHLESS)
        return [(m, p, spec) for m, p, spec in self.entries
                if m == method and not self._control(p) and skeleton(p).endswith(skeleton(end))
                and spec.get("operationId") not in known - {name}]

    def unresolved(self):
        """The operations of PATHLESS the target's document does not give, each with its candidates: what a QA
        engineer fills in with --operation (or --operations FILE)."""
        missing = []
        for name in PATHLESS:
            try:
                self.locate(name)
            except NotOffered:
                missing.append((name, [(m, p) for m, p, _ in self.candidates(name)]))
        return missing

    def _control(self, path):
        return path == CONTROL_PREFIX or path.startswith(CONTROL_PREFIX + "/") or \
            (self.base and path.startswith(self.base + CONTROL_PREFIX + "/"))

    def _entry_at(self, method, path):
        return next((spec for m, p, spec in self.entries if m == method and shape(p) == shape(path)), None)

    def _by_spec_path(self, name, method, spec_path):
        """The document's operation at the spec's method and path, under any prefix but the control API's."""
        wanted = shape(spec_path)
        candidates = [(m, p, spec) for m, p, spec in self.entries
                      if m == method and not self._control(p) and shape(p).endswith(wanted)]
        if not candidates:
            return None
        shapes = [shape(p) for _, p, _ in self.entries]

        def rank(candidate):
            _, path, spec = candidate
            prefix = shape(path)[: len(shape(path)) - len(wanted)]
            shared = sum(s.startswith(prefix + "/") for s in shapes) if prefix else len(shapes)
            return (shared, spec.get("operationId") == name, -len(path))
        doc_method, path, spec = max(candidates, key=rank)
        return doc_method, rename_parameters(path, spec_path), spec

    def resolve(self, name, params=None):
        """(method, path) of an operation with its path parameters filled in (each one URL-quoted).

        Parameters are given by the spec's names (`id`, `tokenId`); a document that names them otherwise
        (`{accountId}`) gets the ones it does not name in order."""
        method, template, _ = self.locate(name)
        params = dict(params or {})
        names = re.findall(r"{([^}/]+)}", template)
        spare = [params[k] for k in params if k not in names]

        def fill(match):
            key = match.group(1)
            if key in params:
                return quote(str(params[key]), safe="")
            if spare:
                return quote(str(spare.pop(0)), safe="")
            raise KeyError(f"{name} needs the path parameter {key!r}")
        return method, re.sub(r"{([^}/]+)}", fill, template)

    def path_parameters(self, name):
        return re.findall(r"{(\w+)}", self.locate(name)[1])

    def operation_id(self, name):
        """The target's own name for an operation (for messages)."""
        return self.locate(name)[2].get("operationId") or name

    # -- what the document says of an operation's payloads ---------------------------------------------------
    def request_schema(self, name):
        """The JSON request body schema of an operation ($refs resolved), or None when the document shows none."""
        spec = self.locate(name)[2]
        body = self.deref(spec.get("requestBody") or {})
        content = body.get("content") or {}
        media = content.get("application/json") or next(
            (v for k, v in content.items() if k.endswith("json")), None)
        schema = (media or {}).get("schema")
        return self.deref(schema) if isinstance(schema, dict) else None

    def response_schema(self, name):
        spec = self.locate(name)[2]
        responses = spec.get("responses") or {}
        for status in sorted(responses):
            if str(status).startswith("2"):
                content = (self.deref(responses[status]) or {}).get("content") or {}
                media = content.get("application/json") or next(
                    (v for k, v in content.items() if k.endswith("json")), None)
                if media and isinstance(media.get("schema"), dict):
                    return self.deref(media["schema"])
        return None

    def deref(self, node, depth=0):
        """A schema with every local $ref replaced by its target (recursion cut at depth 12)."""
        if depth > 12:
            return {}
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/"):
                target = self.document
                for part in ref[2:].split("/"):
                    target = target.get(part.replace("~1", "/").replace("~0", "~"), {}) \
                        if isinstance(target, dict) else {}
                merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
                return self.deref(merged, depth + 1)
            return {k: self.deref(v, depth + 1) for k, v in node.items()}
        if isinstance(node, list):
            return [self.deref(v, depth + 1) for v in node]
        return node

    def prefix_of(self, collection):
        """The prefix under which a collection such as `/users` is served, learned from an operation on it.

        The spec leaves the version prefix of paths outside /partner/v2 open; removed paths are addressed
        under the prefix the document uses for their collection (never the control API's).
        """
        prefixes = {path[: len(path) - len(collection)] for _, path, _ in self.entries
                    if path.endswith(collection) and not self._control(path)}
        if not prefixes:
            return None
        # The service's prefix: the one most paths share.
        return max(sorted(prefixes), key=lambda p: sum(path.startswith(p + "/") for _, path, _ in self.entries))


def rename_parameters(path, spec_path):
    """The document's path with its parameters renamed to the spec's (`{userId}` -> `{id}`), from the end."""
    names = re.findall(r"{([^}/]+)}", path)
    wanted = re.findall(r"{(\w+)}", spec_path)
    renamed = path
    for have, want in zip(names[len(names) - len(wanted):], wanted):
        renamed = renamed.replace("{" + have + "}", "{" + want + "}")
    return renamed


def load_document(source, fetch=None):
    """The OpenAPI document from a file path, an http(s) URL (fetched with `fetch(url)`), or a dict."""
    if isinstance(source, dict):
        return source
    if source.startswith(("http://", "https://")):
        return fetch(source)
    with open(source, encoding="utf-8") as handle:
        return json.load(handle)
