"""Operation resolver: steps name operations by operationId; the target's OpenAPI document says where they live.

The same feature file then runs against a deployment whose paths differ from the simulator's: only the
document changes. `--openapi` supplies a document (a file path or URL) for a target that does not serve one.
"""

import json
import re
from urllib.parse import quote, urlsplit

METHODS = ("get", "put", "post", "delete", "patch", "head", "options")


# Operations the spec gives by method and path but does not name: the simulator names them (DESIGN.md); a
# deployment whose document names them otherwise is still found by the spec's method and path.
SPEC_PATHS = {
    "GetOwnPartner": ("GET", "/partners/self"),
    "UpdateChildPartner": ("PUT", "/partners/{id}"),
    "GetUser": ("GET", "/users/{id}"),
    "CreateOwnUserToken": ("POST", "/users/self/tokens"),
    "CreatePartner": ("POST", "/partners"),
    "UpdatePartner": ("PUT", "/partners/self"),
    "GetPartner": ("GET", "/partners/{id}"),
    "CreateUser": ("POST", "/users"),
    "CreateUserToken": ("POST", "/users/{id}/tokens"),
}


# The simulator's control API lives at fixed paths (DESIGN.md), whatever a document says of the service.
CONTROL = {"SandboxCreatePartner": ("POST", "/_sandbox/partners"), "SandboxGetClock": ("GET", "/_sandbox/clock"),
           "SandboxSetClock": ("POST", "/_sandbox/clock")}

# Names the simulator gave to operations the spec leaves unnamed: a deployment's document may not know them.
SIMULATOR_NAMES = {*SPEC_PATHS, "DeleteChildPartner"} - {"CreatePartner", "UpdatePartner", "GetPartner", "CreateUser",
                                                           "CreateUserToken"}


class UnknownOperation(LookupError):
    """The target's document does not name this operation: the target does not offer it."""


class Operations:
    def __init__(self, document):
        self.document = document
        base = ""
        servers = document.get("servers") or []
        if servers and isinstance(servers[0], dict):
            base = urlsplit(servers[0].get("url", "")).path.rstrip("/")
        self.base = base
        self.by_id = {}
        for path, item in (document.get("paths") or {}).items():
            for method, spec in item.items():
                if method in METHODS and isinstance(spec, dict) and spec.get("operationId"):
                    full = path if not base or path.startswith(base + "/") else base + path
                    self.by_id[spec["operationId"]] = (method.upper(), full, spec)

    def __contains__(self, operation_id):
        return operation_id in self.by_id

    def resolve(self, operation_id, params=None):
        """(method, path) of an operation with its path parameters filled in (each one URL-quoted)."""
        if operation_id not in self.by_id and operation_id in CONTROL:
            return CONTROL[operation_id]
        if operation_id not in self.by_id and operation_id in SPEC_PATHS:
            self._alias(operation_id)
        if operation_id not in self.by_id:
            raise UnknownOperation(f"the target's OpenAPI document has no operation {operation_id!r}")
        method, template, _ = self.by_id[operation_id]
        params = params or {}

        def fill(match):
            name = match.group(1)
            if name not in params:
                raise KeyError(f"{operation_id} needs the path parameter {name!r}")
            return quote(str(params[name]), safe="")
        return method, re.sub(r"{(\w+)}", fill, template)

    def _alias(self, operation_id):
        method, spec_path = SPEC_PATHS[operation_id]
        shape = re.sub(r"{\w+}", "{}", spec_path)
        for doc_method, path, spec in list(self.by_id.values()):
            if doc_method == method and re.sub(r"{\w+}", "{}", path).endswith(shape):
                names = re.findall(r"{(\w+)}", path)
                wanted = re.findall(r"{(\w+)}", spec_path)
                renamed = path
                for have, want in zip(names[len(names) - len(wanted):], wanted):
                    renamed = renamed.replace("{" + have + "}", "{" + want + "}")
                self.by_id[operation_id] = (method, renamed, spec)
                return

    def prefix_of(self, collection):
        """The prefix under which a collection such as `/users` is served, learned from an operation on it.

        The spec leaves the version prefix of paths outside /partner/v2 open; removed paths are addressed
        under the prefix the document uses for their collection.
        """
        prefixes = {path[: len(path) - len(collection)] for _, path, _ in self.by_id.values()
                    if path.endswith(collection)}
        if not prefixes:
            return None
        # The service's prefix, not another tree's (the simulator's /_sandbox/partners): the one most paths share.
        return max(sorted(prefixes), key=lambda p: sum(path.startswith(p + "/") for _, path, _ in self.by_id.values()))


def load_document(source, fetch=None):
    """The OpenAPI document from a file path, an http(s) URL (fetched with `fetch(url)`), or a dict."""
    if isinstance(source, dict):
        return source
    if source.startswith(("http://", "https://")):
        return fetch(source)
    with open(source, encoding="utf-8") as handle:
        return json.load(handle)
