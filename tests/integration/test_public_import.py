"""``import farm`` stays light: the public names load their modules only when asked for."""

import subprocess
import sys


def test_importing_farm_loads_neither_scrapy_nor_farms_parts():
    code = (
        "import sys, farm; print(sorted(m for m in ('scrapy', 'farm.addon', 'farm.spiders.base') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
