"""The Alembic migrations on real databases: empty to head, 0001 with rows to head, head == models."""

from dataclasses import replace
from datetime import UTC, date, datetime

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect, select, text

from farm.openings.cluster import blocking_keys
from farm.salary import COLUMNS as SALARY
from farm.state import KeywordStore
from farm.state.db import make_engine
from farm.state.migrate import (
    HEAD,
    SchemaNotCurrent,
    current_revision,
    head_revision,
    require_current,
    upgrade,
)
from farm.state.models import Base, Keyword


@pytest.fixture
def engine(every_db_url):
    engine = make_engine(every_db_url)
    yield engine
    engine.dispose()


def _same_empty_default(
    context, inspected_column, metadata_column, inspected_default, metadata_default, rendered_metadata_default
):
    # alembic calls an empty-string server default changed (the model's renders as nothing,
    # the database's reads back as "''" or "('')"); only that case is settled here, every
    # other default is left to alembic
    def bare(value):
        value = (value or "").strip()
        while value.startswith("(") and value.endswith(")"):
            value = value[1:-1].strip()
        return value

    if bare(rendered_metadata_default) in ("", "''") and bare(inspected_default) == "''":
        return False
    return None


def schema_differences(engine):
    with engine.connect() as conn:
        context = MigrationContext.configure(
            conn,
            opts={"compare_type": True, "compare_server_default": _same_empty_default},
        )
        return compare_metadata(context, Base.metadata)


def test_head_is_0016():
    assert head_revision() == "0016" == HEAD


def test_upgrade_to_opening_keys_gives_each_stored_opening_its_blocking_keys(every_db_url):
    upgrade(every_db_url, revision="0013")
    engine = make_engine(every_db_url)
    row = dict(city="北京", company_key="字节跳动", title_key="python开发工程师", salary_min=None, salary_max=None)
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO opening (id, city, company_key, title_key, district, degree) "
                          "VALUES (1, :city, :company_key, :title_key, '', '')"), row)  # fmt: skip
    upgrade(every_db_url)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT experience FROM opening")).scalar_one() == ""
        keys = conn.execute(text("SELECT block_key, opening_id FROM opening_key ORDER BY block_key")).all()
    expected = blocking_keys("北京", "字节跳动", "python开发工程师", 0.85)
    assert sorted(keys) == sorted((key, 1) for key in expected) and len(expected) == 2
    engine.dispose()


def test_upgrade_empty_database_to_head(engine):
    assert current_revision(engine) is None
    upgrade(engine)
    assert current_revision(engine) == head_revision()
    tables = set(inspect(engine).get_table_names())
    assert {"keyword", "job_posting", "alembic_version"} <= tables
    upgrade(engine)  # again: nothing to do
    assert current_revision(engine) == head_revision()


def test_upgrade_by_url(every_db_url, engine):
    upgrade(every_db_url, revision="0001")
    assert current_revision(engine) == "0001"
    upgrade(every_db_url)
    assert current_revision(engine) == HEAD


def test_schema_at_head_equals_models(engine):
    upgrade(engine)
    assert schema_differences(engine) == []


def test_schema_at_0001_differs_from_models(engine):
    upgrade(engine, revision="0001")
    diffs = schema_differences(engine)
    added_columns = {d[3].name for d in diffs if d[0] == "add_column"}
    assert added_columns == {"lease_token", "heartbeat_at", "pages_ahead", "retry_at", "blocked_claims", "site_total"}
    assert any(d[0] == "add_table" and d[1].name == "job_posting" for d in diffs)


def test_schema_at_0002_lacks_the_retry_and_block_columns(engine):
    upgrade(engine, revision="0002")
    added_columns = {d[3].name for d in schema_differences(engine) if d[0] == "add_column"}
    assert added_columns == {"retry_at", "blocked_claims", "site_total", *SALARY}


def test_schema_at_0003_keeps_lease_tokens_in_an_int(engine):
    upgrade(engine, revision="0003")
    changed = [d[0] for d in schema_differences(engine) if isinstance(d, list)]
    assert [(c[0], c[3]) for c in changed] == [("modify_type", "lease_token")]


def test_upgrade_database_with_rows_at_0003_keeps_them_and_holds_random_tokens(engine):
    upgrade(engine, revision="0003")
    now = datetime(2025, 3, 10, 4, 0)
    with engine.begin() as conn:
        for kid, status, token in ((1, "crawling", 7), (2, "partial", 2**31 - 1), (3, "idle", 0)):
            conn.execute(
                text(
                    "INSERT INTO keyword (id, source, city, job, last_requested_date, crawl_status, "
                    "last_completed_page, jobs_found, crawler_id, retry_count, created_at, updated_at, "
                    "lease_token, heartbeat_at, pages_ahead, blocked_claims) VALUES (:id, 'boss', '北京', :job, "
                    ":d, :status, 2, 30, 'old-host', 0, :now, :now, :token, :now, '4', 0)"
                ),
                dict(id=kid, job=f"job{kid}", d=date(2025, 3, 10), status=status, token=token, now=now),
            )
    upgrade(engine)
    assert current_revision(engine) == HEAD
    k = Keyword.__table__.c
    with engine.connect() as conn:
        rows = conn.execute(
            select(k.id, k.crawl_status, k.lease_token, k.last_completed_page, k.pages_ahead).order_by(k.id)
        ).all()
    assert [tuple(r) for r in rows] == [
        (1, "crawling", 7, 2, "4"),
        (2, "partial", 2**31 - 1, 2, "4"),
        (3, "idle", 0, 2, "4"),
    ]
    # the column now holds a 63-bit token, and the holder of the old one is fenced off
    clock = lambda: datetime(2025, 3, 10, 12, 0, tzinfo=UTC)  # noqa: E731
    store = KeywordStore(engine, clock=clock, lease_timeout=1800)
    [lease] = store.claim("boss", "w")
    assert lease.id == 2 and lease.lease_token > 2**31
    assert store.lease("boss", 2, lease.lease_token).lease_token == lease.lease_token
    assert store.heartbeat(lease) and not store.heartbeat(replace(lease, lease_token=2**31 - 1))


SEED_ROWS = [
    # id, source, city, job, last_requested_date, crawl_status, last_completed_page, total_pages,
    # jobs_found, crawl_started_at
    (1, "boss", "北京", "python", date(2025, 3, 10), "completed", 3, 3, 45, datetime(2025, 3, 10, 1, 0)),
    (2, "qcwy", "上海", "java", date(2025, 3, 10), "crawling", 7, 50, 350, datetime(2025, 3, 10, 2, 0)),
    (3, "zhilian", "101010100", "数据分析", None, "idle", 0, None, 0, None),
    (4, "boss", "深圳", "golang", date(2025, 3, 10), "partial", 2, None, 30, datetime(2025, 3, 10, 3, 0)),
]


def test_upgrade_database_with_rows_at_0001_loses_none(engine):
    upgrade(engine, revision="0001")
    created = datetime(2025, 3, 1, 0, 0)
    with engine.begin() as conn:
        for r in SEED_ROWS:
            conn.execute(
                text(
                    "INSERT INTO keyword (id, source, city, job, last_requested_date, crawl_status, "
                    "last_completed_page, total_pages, jobs_found, crawl_started_at, crawler_id, "
                    "error_message, retry_count, created_at, updated_at) VALUES (:id, :source, :city, "
                    ":job, :d, :status, :page, :total, :jobs, :started, 'old-host', NULL, 0, :c, :c)"
                ),
                dict(
                    zip(("id", "source", "city", "job", "d", "status", "page", "total", "jobs", "started"), r),
                    c=created,
                ),
            )
    upgrade(engine)
    assert current_revision(engine) == HEAD
    k = Keyword.__table__.c
    with engine.connect() as conn:
        rows = conn.execute(
            select(
                k.id,
                k.source,
                k.city,
                k.job,
                k.last_requested_date,
                k.crawl_status,
                k.last_completed_page,
                k.total_pages,
                k.jobs_found,
                k.lease_token,
                k.pages_ahead,
                k.heartbeat_at,
                k.crawl_started_at,
                k.retry_at,
                k.blocked_claims,
            ).order_by(k.id)
        ).all()
    assert len(rows) == len(SEED_ROWS)
    for got, want in zip(rows, SEED_ROWS):
        assert tuple(got[:9]) == want[:9]
        assert (got.lease_token, got.pages_ahead, got.retry_at, got.blocked_claims) == (0, "", None, 0)
        started = want[9].replace(tzinfo=UTC) if want[9] else None
        assert got.crawl_started_at == started
        # a row crawling at upgrade time gets its start as its last heartbeat, so the reaper sees it
        assert got.heartbeat_at == (started if want[5] == "crawling" else None)
    # and the store works on the upgraded rows
    clock = lambda: datetime(2025, 3, 10, 12, 0, tzinfo=UTC)  # noqa: E731
    store = KeywordStore(engine, clock=clock, lease_timeout=1800)
    assert store.reap() == 1  # the 0001-era crawling row, started 10 hours ago
    [lease] = store.claim("boss", "w")
    assert (lease.id, lease.from_status, lease.start_page) == (4, "partial", 3)


def test_upgrade_to_ids_compared_as_written_keeps_every_row(engine):
    upgrade(engine, revision="0004")
    store = KeywordStore(engine)
    store.add_keywords([("qcwy", "北京", "python"), ("qcwy", "上海", "java")])
    [lease] = store.claim("qcwy", "worker 1")
    row = {"source": "qcwy", "keyword_id": lease.id, "title": "t"}
    seen = datetime(2026, 12, 3)
    with engine.begin() as conn:  # postings as the 0004 schema holds them (the store writes newer columns)
        for job_id in ("a", "b "):
            conn.execute(
                text(
                    "INSERT INTO job_posting (source, job_id, title, keyword_id, first_seen_at, "
                    "last_seen_at) VALUES (:source, :job_id, :title, :keyword_id, :seen, :seen)"
                ),
                {**row, "job_id": job_id, "seen": seen},
            )
    before = _everything(engine)
    upgrade(engine)
    assert current_revision(engine) == HEAD
    assert _everything(engine) == before
    # the key columns now tell trailing spaces apart: another posting, another crawler
    store.upsert_postings([{**row, "job_id": "a "}], datetime(2026, 12, 3, tzinfo=UTC))
    assert sorted(_everything(engine)[1]) == sorted([*before[1], ("qcwy", "a ")])
    assert store.take_back("qcwy", "worker 1 ") == []  # the lease of "worker 1" is not its


def _everything(engine):
    with engine.connect() as conn:
        keywords = conn.execute(
            text(
                "SELECT id, source, city, job, crawler_id, crawl_status, lease_token, "
                "last_completed_page FROM keyword ORDER BY id"
            )
        ).all()
        postings = conn.execute(text("SELECT source, job_id FROM job_posting ORDER BY id")).all()
    return [tuple(r) for r in keywords], [tuple(r) for r in postings]


def test_require_current_on_empty_database(engine):
    with pytest.raises(SchemaNotCurrent) as err:
        require_current(engine)
    message = str(err.value)
    assert "empty" in message and "farm db upgrade" in message
    assert engine.url.database in message


def test_require_current_on_old_database(engine):
    upgrade(engine, revision="0001")
    with pytest.raises(SchemaNotCurrent, match=r"at revision 0001.*farm db upgrade"):
        require_current(engine)
    upgrade(engine)
    require_current(engine)  # current: no error
