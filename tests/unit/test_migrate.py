"""farm.state.migrate where Alembic's scripts are not files (farm imported from a scrapyd egg)."""

import pytest

from farm.state import migrate


def test_upgrading_without_the_scripts_on_disk_says_to_run_it_from_an_installed_farm(monkeypatch, tmp_path):
    egg = tmp_path / "farm-1.egg"
    egg.write_bytes(b"PK")  # a zip, as scrapyd stores an egg: the migrations are no directory
    monkeypatch.setattr(migrate, "MIGRATIONS", egg / "farm" / "state" / "migrations")
    with pytest.raises(migrate.MigrationsNotOnDisk, match="run `farm db upgrade` from an installed farm"):
        migrate.upgrade("sqlite://")
