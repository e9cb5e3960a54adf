"""What a fresh interpreter imports: `farm stats` and `farm doctor` start without the sandbox's and the
API's code (aiohttp and the sandbox's generated data are most of the command's start, and those commands
answer within a second on a large table); the cities module, which keyword validation uses, without Scrapy."""

import subprocess
import sys


def test_the_farm_command_imports_neither_the_sandbox_nor_the_api_until_named():
    code = (
        "import sys, farm.cli; "
        "print(sorted(m for m in ('aiohttp', 'farm.sandbox.data', 'farm.api.server') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_farm_cities_does_not_import_scrapy():
    code = "import sys, farm.cities, farm.state.validation; print('scrapy' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr
