"""The three site modules by name; each knows its paths, page size, page cap, rendering and own faults."""

from . import boss, qcwy, zhilian

SITE_MODULES = {m.SITE: m for m in (boss, qcwy, zhilian)}
