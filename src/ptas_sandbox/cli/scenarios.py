"""`ptas scenarios`: the named sandbox worlds."""


def add(commands):
    sc = commands.add_parser("scenarios", help="list the named scenarios")
    sc.set_defaults(func=scenarios)


def scenarios(args):
    from ptas_sandbox.simulator.tools.scenarios import catalogue
    for name, summary in catalogue():
        print(f"{name:20} {summary}")
