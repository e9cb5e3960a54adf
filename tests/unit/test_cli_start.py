"""`farm sandbox` and `farm api` stay commands of farm, though `farm` loads a command's code only when it
is named (tests/integration/test_fresh_imports.py: a fresh `farm`, and `farm --help`, import neither);
`farm --help` lists every command by the first line of its own help."""


def test_sandbox_and_api_are_still_commands_of_farm():
    from farm.cli import farm

    assert {"sandbox", "api"} <= set(farm.list_commands(None))
    assert farm.get_command(None, "sandbox").name == "sandbox"
    assert farm.get_command(None, "api").name == "api"


def test_farm_help_lists_every_command_by_its_own_first_line():
    import click

    from farm.cli import farm

    assert set(farm.LAZY_HELP) == set(farm.LAZY)
    for name in farm.LAZY:
        command = farm.get_command(None, name)
        listed = click.Command(name, help=farm.LAZY_HELP[name])
        for limit in (30, 45, 60, 200):
            assert listed.get_short_help_str(limit) == command.get_short_help_str(limit), name
