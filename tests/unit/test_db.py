"""Database URLs: masked wherever they are shown, and a malformed one is one clear error."""

import pytest

from farm.state.db import DatabaseUrlError, make_engine, mask_url


@pytest.mark.parametrize("url, masked", [
    ("mysql+pymysql://u:secret@host:3306/farm", "mysql+pymysql://u:***@host:3306/farm"),
    ("mysql+pymysql://u:secret@host:notaport/db", "mysql+pymysql://u:***@host:notaport/db"),
    ("mysql+pymysql://u:sec@ret@host/db", "mysql+pymysql://u:***@host/db"),  # an @ in the password
    ("mysql+pymysql://u:se/c?ret@host/db", "mysql+pymysql://u:***@host/db"),  # a / and a ? in it
    ("mysql+pymysql://:secret@host/db", "mysql+pymysql://:***@host/db"),
    ("mysql+pymysql://root:secret/farm", "mysql+pymysql://root:***/farm"),  # no @host: not a port
    ("u:secret@host/db", "u:***@host/db"),  # no scheme
    ("mysql+pymysql://u@h/db?password=secret&charset=utf8mb4", "mysql+pymysql://u@h/db?password=***&charset=utf8mb4"),
    ("mysql+pymysql://u@h/db?charset=utf8mb4&passwd=secret", "mysql+pymysql://u@h/db?charset=utf8mb4&passwd=***"),
    # nothing to hide
    ("mysql+pymysql://host:3306/farm", "mysql+pymysql://host:3306/farm"),
    ("mysql+pymysql://u@[::1]:3306/farm", "mysql+pymysql://u@[::1]:3306/farm"),
    ("mysql+pymysql://[::1]:3306/farm", "mysql+pymysql://[::1]:3306/farm"),
    ("sqlite:///farm.db", "sqlite:///farm.db"),
    ("sqlite:///C:/farm.db", "sqlite:///C:/farm.db"),
    ("not a url", "not a url"),
])  # fmt: skip
def test_mask_url_hides_the_password_of_any_text(url, masked):
    assert mask_url(url) == masked


@pytest.mark.parametrize("url, problem", [
    ("mysql+pymysql://u:secret@host:notaport/db", "has a port that is not a number (1 to 65535)"),
    ("mysql+pymysql://u:secret@host:/db", "has a port that is not a number (1 to 65535)"),
    ("mysql+pymysql://u:secret@host:99999/db", "has port 99999, outside 1 to 65535"),
    ("mysql+pymysql://u:secret@host:0/db", "has port 0, outside 1 to 65535"),
    ("mysql+pymysql://root:secret/farm", "has a port that is not a number (1 to 65535)"),
    ("u:secret@host/db", "is not a database URL"),
    ("nosuchdb://u:secret@host/db", "cannot be used: Can't load plugin: sqlalchemy.dialects:nosuchdb"),
    ("sqlite://u:secret@/x.db", "cannot be used: Invalid SQLite URL"),
])  # fmt: skip
def test_a_malformed_url_is_one_masked_line_naming_the_setting_and_the_problem(url, problem):
    with pytest.raises(DatabaseUrlError) as info:
        make_engine(url)
    message = str(info.value)
    assert message.startswith(f"FARM_DB_URL={mask_url(url)!r} {problem}")
    assert message.endswith("(e.g. sqlite:///farm.db or mysql+pymysql://user:password@host:3306/farm)")
    assert "secret" not in message and "\n" not in message
    # nothing chained that would print the raw URL, or a part of it, under a traceback
    error = info.value
    assert error.__cause__ is None and (error.__context__ is None or error.__suppress_context__)


def test_the_setting_named_is_the_one_given():
    with pytest.raises(DatabaseUrlError, match=r"^--db-url='mysql\+pymysql://u:\*\*\*@h:x/db' has a port"):
        make_engine("mysql+pymysql://u:secret@h:x/db", setting="--db-url")


def test_a_good_url_still_makes_an_engine(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'farm.db'}")
    try:
        with engine.connect() as conn:
            assert conn.exec_driver_sql("select 1").scalar() == 1
    finally:
        engine.dispose()
