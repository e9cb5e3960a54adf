"""docs/settings.md's tables of settings, written from farm.config's declarations.

``python -m farm.config.doc [docs/settings.md]`` rewrites the part of the page between its two marker
lines; a test holds the page equal to what it writes. Everything else on the page is written by hand.
"""

import sys
from pathlib import Path
from typing import Any

from farm.config.base import Group, Setting, about
from farm.config.checks import Thresholds
from farm.config.model import FarmConfig
from farm.config.sites import SiteConfig, site_defaults, site_key
from farm.sites import named

BEGIN = "<!-- the tables below are written by `python -m farm.config.doc` from farm/config: edit there -->"
END = "<!-- end of the tables written by farm.config.doc -->"
HEAD = "| setting | default | takes | what it does |\n|---|---|---|---|"


def shown(value: Any) -> str:
    """A default as the tables give it."""
    if value in ("", (), None):
        return "unset"
    return f"`{value:g}`" if isinstance(value, float) else f"`{value}`"


def _row(names: str, default: str, declared: Setting) -> str:
    return f"| {names} | {declared.shown or default} | {declared.kind.takes} | {declared.doc} |"


def _group_rows(cls: type[Group]) -> list[str]:
    rows = []
    for name, declared in cls.settings_fields().items():
        key, env = cls.key(name), cls.env_name(name)
        names = f"`{key}`" if env == key else f"`{key}` (environment: `{env}`)"
        rows.append(_row(names, shown(cls.model_fields[name].get_default(call_default_factory=False)), declared))
    return rows


def _site_rows() -> list[str]:
    rows = []
    for name in SiteConfig.fields():
        declared = about(SiteConfig.model_fields[name])
        assert declared is not None
        each = ", ".join(f"{site} {shown(getattr(config, name))}" for site, config in site_defaults().items())
        default = f"{each}; another site {shown(SiteConfig.model_fields[name].default)}"
        rows.append(_row(f"`{site_key('<SITE>', name)}`", default, declared))
    return rows


def tables() -> str:
    """The tables, between their markers."""
    return "\n".join(
        [
            BEGIN,
            "",
            HEAD,
            *_group_rows(FarmConfig),
            "",
            "### Each site's",
            "",
            "A site's settings, its spider's `site` (or `name`) in capitals: farm's own sites' ("
            + named(f"`{site}`" for site in site_defaults())
            + ") and a project's own (see [The add-on](addon.md)). A site farm does not know "
            "is crawled politely unless its settings say otherwise, never without a limit "
            "(`FARM_<SITE>_RATE=0` lifts it).",
            "",
            HEAD,
            *_site_rows(),
            "",
            "### `farm check`'s",
            "",
            "The thresholds of [`farm check`](checks.md); `FARM_ALERT_URLS` (above) is where it sends its failures.",
            "",
            HEAD,
            *_group_rows(Thresholds),
            "",
            END,
        ]
    )


def written(page: str) -> str:
    """``page`` with its tables written anew."""
    before, _, rest = page.partition(BEGIN)
    _, found, after = rest.partition(END)
    if not found:
        raise ValueError(f"the page has no {BEGIN!r} ... {END!r} lines to write between")
    return before + tables() + after


def main(argv: list[str]) -> int:
    path = Path(argv[0] if argv else "docs/settings.md")
    path.write_text(written(path.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
