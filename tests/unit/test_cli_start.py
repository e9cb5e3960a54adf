"""`farm sandbox` and `farm api` stay commands of farm, though `farm` loads their code only when one is
named (tests/integration/test_fresh_imports.py: a fresh `farm` imports neither)."""


def test_sandbox_and_api_are_still_commands_of_farm():
    from farm.cli import farm

    assert {"sandbox", "api"} <= set(farm.list_commands(None))
    assert farm.get_command(None, "sandbox").name == "sandbox"
    assert farm.get_command(None, "api").name == "api"
