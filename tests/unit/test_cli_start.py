"""`farm stats` and `farm doctor` start without the sandbox's and the API's code: aiohttp and
the sandbox's generated data are most of the command's start, and those commands answer
within a second on a large table."""

import subprocess
import sys


def test_the_farm_command_imports_neither_the_sandbox_nor_the_api_until_named():
    code = (
        "import sys, farm.cli; "
        "print(sorted(m for m in ('aiohttp', 'farm.sandbox.data', 'farm.api.server') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_sandbox_and_api_are_still_commands_of_farm():
    from farm.cli import farm

    assert {"sandbox", "api"} <= set(farm.list_commands(None))
    assert farm.get_command(None, "sandbox").name == "sandbox"
    assert farm.get_command(None, "api").name == "api"
