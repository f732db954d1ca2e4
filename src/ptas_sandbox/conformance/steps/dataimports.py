"""Steps of the data import features (spec §2, §4.2 GET /dataimports and GET /dataimports/{id}, §7 rule 4)."""

from pytest_bdd import then, when

from ..checks import items, reports_problems
from ..scene import check
from . import acting


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
