"""What a fresh interpreter imports: `farm stats` and `farm doctor` start without the sandbox's and the
API's code (aiohttp and the sandbox's generated data are most of the command's start, and those commands
answer within a second on a large table); `farm --help` imports no command's code, nor Scrapy nor the
store; a crawl of farm's project loads its extensions without Scrapy's remote control, which is off and
would import aiohttp's server; `scrapy list` (the project's commands and spiders) without the store or
the crawl's start; the store and the state writer without PostgreSQL's dialect; the cities module,
which keyword validation uses, without Scrapy."""

import json
import subprocess
import sys


def test_the_farm_command_imports_neither_the_sandbox_nor_the_api_until_named():
    code = (
        "import sys, farm.cli; "
        "print(sorted(m for m in ('aiohttp', 'farm.sandbox.data', 'farm.api.server') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_farm_help_imports_no_command_nor_scrapy_nor_the_store():
    code = (
        "import sys; from farm.cli import main; sys.argv = ['farm', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('aiohttp', 'farm.sandbox', 'farm.api', 'farm.cli.stats', 'scrapy', 'sqlalchemy', "
        "'farm.state') if m in sys.modules), file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "sandbox" in done.stdout and "stats" in done.stdout  # listed all the same
    assert done.stderr.strip().splitlines()[-1] == "[]", done.stderr


def test_a_crawls_extensions_load_without_aiohttp():
    code = (
        "import sys\n"
        "from scrapy.settings import Settings\n"
        "from scrapy.utils.conf import build_component_list\n"
        "from scrapy.utils.misc import load_object\n"
        "from farm.addon import FarmAddon\n"
        "settings = Settings()\n"
        "settings.setmodule('farm.settings', priority='project')\n"
        "FarmAddon().update_settings(settings)\n"
        "loaded = build_component_list(settings.get_component_priority_dict_with_base('EXTENSIONS'))\n"
        "assert 'farm.crawl.parts.CrawlParts' in loaded, loaded\n"
        "classes = [load_object(path) for path in loaded]  # as Scrapy's ExtensionManager does\n"
        "print(sorted(m for m in ('aiohttp', 'scrapy.extensions.remote_control') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stderr


def imported(code: str, names: tuple[str, ...]) -> list[str]:
    """Which of ``names`` a fresh interpreter has imported after running ``code``."""
    code += f"\nimport json, sys; print(json.dumps(sorted(name for name in {names!r} if name in sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_projects_commands_and_spiders_load_without_the_store():
    code = "import farm.commands.crawl, farm.sites.boss.spider, farm.sites.qcwy.spider, farm.sites.zhilian.spider"
    names = ("farm.state.store", "farm.crawl.starting", "sqlalchemy.dialects.postgresql")
    assert imported(code, names) == []


def test_the_store_and_the_writer_load_without_postgresqls_dialect():
    code = "import farm.state.store, farm.writer.serve"
    assert imported(code, ("sqlalchemy.dialects.postgresql",)) == []


def test_farm_cities_does_not_import_scrapy():
    code = "import sys, farm.sites.cities, farm.state.validation; print('scrapy' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr
