"""Steps of the data import features (spec §2, §4.2 GET /dataimports and GET /dataimports/{id}, §7 rule 4)."""

from pytest_bdd import then, when

from ..checks import items, reports_problems, strings
from ..scene import check
from ..unchecked import not_applicable
from . import acting, phrase
from .accounts import account_id
from .transactions import first_import_done


def every_entry_reports(scene, what, missing):
    """The first entry of a list whose every entry reports errors and warnings (spec §7 rule 4)."""
    found = items(scene.reply, what)
    check(found, missing)
    for entry in found:
        reports_problems(entry, f"every one of the {what}")
    return found[0]


@when(acting("{actor} lists the data imports"))
def list_imports(scene, actor):
    scene.call("GetDataImports", actor)


@then("every data import reports errors and warnings", target_fixture="data_import")
def imports_report(scene):
    return every_entry_reports(scene, "data imports", "creating an account started a data import")


@when("I read that data import")
def read_import(scene, data_import):
    scene.call("GetDataImport", params={"id": scene.id_of(data_import, "GetDataImport")})


@then("it reports errors and warnings")
def one_reports(scene):
    check(scene.reply.ok, f"expected it, got {scene.reply.describe()}")
    reports_problems(scene.reply.body, scene.reply.operation)


def naming(entries, record_id):
    """The entries that carry `record_id` among their values (the spec shows no field of a data import)."""
    wanted = str(record_id).lower()
    return [entry for entry in entries if any(text.lower() == wanted for text in strings(entry))]


MOST_PAGES = 20     # pages of GET /dataimports read when a target pages it (the spec shows no paging of it)


def every_import(scene, reply=None):
    """Every data import the partner's list shows: its pages followed where the target answers a
    nextPageReference (a staging partner may hold hundreds of imports of earlier runs). `reply`: its first page,
    where it is held already."""
    reply, listed = reply or scene.client.call("GetDataImports", token=scene.token), []
    for _ in range(MOST_PAGES):
        listed += items(reply, "data imports")
        following = reply.body.get("nextPageReference") if isinstance(reply.body, dict) else None
        if not isinstance(following, str) or not following:
            break
        reply = scene.client.call("GetDataImports", token=scene.token, query={"pageReference": following})
    return listed


@then(phrase('the data import the account "{label}" started is among them, whatever its state'))
def account_import_listed(scene, label):
    """A list shows every record of the caller whatever its state (spec §4.2: GET /dataimports lists data
    imports): the import CreateAccount started (§1 capability 5: after an account is created the service starts
    fetching its transactions) is listed, running or already finished. The spec shows no field of a data import:
    an entry is the account's when it names the account's id; a target whose entries name no account of the
    partner is not judged here. A service may record the import only when it begins, after the account is made:
    the import is judged once its transactions are there (its effect seen), as TransactionsImported is."""
    account = account_id(scene, label)
    listed = every_import(scene, scene.reply)
    if naming(listed, account):
        return
    others = scene.client.call("GetAccounts", token=scene.token)
    known = {str(a).lower() for a in scene.ids_in(others, "accounts", "GetAccount") if a is not None} \
        if others.ok else set()
    known.discard(str(account).lower())
    if not any(naming(listed, other) for other in known):
        not_applicable("the data imports listed name no account of the partner: which one the new account "
                       "started cannot be told")
    first_import_done(scene, label)
    listed = every_import(scene)
    check(naming(listed, account), f"GET /dataimports lists {len(listed)} data imports naming the partner's other "
          f"accounts, but not the one that brought the account {label!r} its transactions (spec §4.2: it lists "
          "data imports, whatever their state; §1 capability 5)")
