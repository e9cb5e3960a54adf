"""What `farm openings update` reads (farm.openings.waiting, farm.openings.keyed): the postings waiting in
``opening_waiting``, which the database fills as a posting is inserted and the update empties, and of the
openings a blocking key names only those the database keeps as a posting's possible candidates."""

from sqlalchemy import event, insert, select, text
from sqlalchemy.engine import Engine

from farm.openings.cluster import Opening, PostingSeen, blocking_keys
from farm.openings.keyed import key_rows, keyed_openings, named_openings
from farm.openings.stored import update_openings, waiting
from farm.state.db import make_engine
from farm.state.migrate import upgrade
from farm.state.models import JobPostingRow, OpeningKey, OpeningPosting, OpeningRow, OpeningWaiting
from farm.state.store import KeywordStore
from tests.integration.test_openings_stored import DAY_1, FIRST, SECOND, rows_of
from tests.migrated import migrated


def waiting_ids(engine) -> list[int]:
    with engine.connect() as connection:
        return list(connection.execute(select(OpeningWaiting.posting_id).order_by(OpeningWaiting.posting_id)).scalars())


def posting_ids(engine, postings) -> list[int]:
    wanted = {(p["source"], p["job_id"]) for p in postings}
    with engine.connect() as connection:
        rows = connection.execute(select(JobPostingRow.id, JobPostingRow.source, JobPostingRow.job_id)).all()
    return sorted(row.id for row in rows if (row.source, row.job_id) in wanted)


def test_a_posting_inserted_waits_until_an_update_puts_it_in_an_opening_and_a_sighting_again_adds_none(every_db_url):
    migrated(every_db_url)
    engine = make_engine(every_db_url)
    store = KeywordStore(engine)
    store.upsert_postings(FIRST, DAY_1)
    assert waiting_ids(engine) == posting_ids(engine, FIRST)
    assert update_openings(engine).postings == 3
    assert waiting_ids(engine) == []
    store.upsert_postings(FIRST + SECOND, DAY_1.replace(hour=5))  # FIRST seen again: updated, not inserted
    assert waiting_ids(engine) == posting_ids(engine, SECOND)
    with engine.connect() as connection:
        assert waiting(connection) == 3
    assert update_openings(engine).postings == 3
    assert waiting_ids(engine) == []
    store.close()


def test_the_migration_makes_every_posting_in_no_opening_wait_and_keys_the_openings_by_company_and_title(every_db_url):
    upgrade(every_db_url, revision="0015")
    engine = make_engine(every_db_url)
    with engine.begin() as connection:
        connection.execute(
            insert(JobPostingRow.__table__),
            rows_of([PostingSeen("boss", "b1", "Python开发工程师", "字节跳动", "北京")], DAY_1),
        )
        connection.execute(
            insert(JobPostingRow.__table__), rows_of([PostingSeen("boss", "b2", "Java工程师", "美团", "北京")], DAY_1)
        )
        grouped = connection.execute(select(JobPostingRow.id).where(JobPostingRow.job_id == "b1")).scalar_one()
        connection.execute(
            text(
                "INSERT INTO opening (id, city, company_key, title_key, district, degree) "
                "VALUES (1, '北京', '字节跳动', 'python开发工程师', '', '')"
            )  # fmt: skip
        )
        connection.execute(
            text(f"INSERT INTO opening_posting (posting_id, opening_id, why) VALUES ({grouped}, 1, '{{}}')")
        )
    upgrade(every_db_url)
    with engine.connect() as connection:
        left = connection.execute(select(JobPostingRow.id).where(JobPostingRow.job_id == "b2")).scalar_one()
        keys = connection.execute(select(OpeningKey.__table__)).all()
    assert waiting_ids(engine) == [left]
    expected = blocking_keys("北京", "字节跳动", "python开发工程师", 0.85)
    assert sorted(keys) == sorted((key, "字节跳动", 10, 1) for key in expected)
    assert update_openings(engine).postings == 1
    assert waiting_ids(engine) == []
    engine.dispose()


def test_an_update_reads_no_stored_posting_but_by_its_id(sqlite_url):
    """SQLite's plan of every statement an update reads with: none scans job_posting (the stored postings
    are many; an update costs what its new ones do)."""
    migrated(sqlite_url)
    engine = make_engine(sqlite_url)
    store = KeywordStore(engine)
    store.upsert_postings(FIRST, DAY_1)
    update_openings(engine)
    store.upsert_postings(SECOND, DAY_1.replace(hour=5))
    scans = []

    def plan(conn, cursor, statement, parameters, context, executemany):
        if executemany or not statement.lstrip().upper().startswith("SELECT"):
            return
        for row in cursor.connection.execute(f"EXPLAIN QUERY PLAN {statement}", parameters).fetchall():
            if row[-1].startswith("SCAN job_posting"):
                scans.append((row[-1], statement))

    event.listen(Engine, "after_cursor_execute", plan)
    try:
        assert update_openings(engine).postings == 3
    finally:
        event.remove(Engine, "after_cursor_execute", plan)
    assert scans == []
    store.close()


def opening(opening_id: int, company: str, title: str) -> Opening:
    return Opening(opening_id, "北京", company, title, None, None, "", "")


def test_the_database_drops_the_openings_a_key_names_that_no_posting_may_join(every_db_url):
    migrated(every_db_url)
    engine = make_engine(every_db_url)
    title = "python开发工程师"
    key = blocking_keys("北京", "字节跳动", title, 0.85)[0]
    openings = [
        opening(1, "字节跳动", title),  # the same company and title
        opening(2, "字节", title),  # a company key the posting's starts with
        opening(3, "字节跳动教育", "python开发工程师+"),  # one that starts with the posting's
        opening(4, "字节不同", title),  # another company of the same first characters
        opening(5, "字节跳动", title + "第12组之后还有许多字"),  # a title of too many bigrams
        opening(6, "字节跳动", "py"),  # and one of too few
        opening(7, "字节跳动", "java开发工程师"),  # bigrams enough, too few of them shared
    ]
    with engine.begin() as connection:
        connection.execute(
            insert(OpeningRow),
            [
                {
                    "id": o.id,
                    "city": o.city,
                    "company_key": o.company_key,
                    "title_key": o.title_key,
                    "district": "",
                    "degree": "",
                    "experience": "",
                }  # fmt: skip
                for o in openings
            ],
        )
        connection.execute(
            insert(OpeningKey), [{**row, "block_key": key} for o in openings for row in key_rows(o, 0.85)[:1]]
        )
        wanted = {key: {("字节跳动", title)}}
        named = sorted({row.id for row in named_openings(connection, wanted, 0.85)})
        kept = [found.id for found in keyed_openings(connection, wanted, 0.85)]
    assert named == [1, 2, 3, 7]
    assert kept == [1, 2, 3]
    engine.dispose()


def test_an_opening_posting_row_of_a_waiting_posting_settles_it(sqlite_url):
    """A waiting row whose posting is in an opening already is deleted as it is read, and not put in another."""
    migrated(sqlite_url)
    engine = make_engine(sqlite_url)
    store = KeywordStore(engine)
    store.upsert_postings(FIRST, DAY_1)
    update_openings(engine)
    grouped = posting_ids(engine, FIRST)
    with engine.begin() as connection:
        connection.execute(insert(OpeningWaiting), [{"posting_id": grouped[0]}])
    assert update_openings(engine).postings == 0
    assert waiting_ids(engine) == []
    with engine.connect() as connection:
        assert len(connection.execute(select(OpeningPosting.posting_id)).all()) == 3
    store.close()
