"""Site packages of the tests' own: a fourth site, as a project adds one (docs/addon.md)."""
