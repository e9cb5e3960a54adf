"""Openings stored (farm.openings.stored): `farm openings update` puts each day's new postings into the
openings stored, giving what a rebuild from every posting gives; `explain` reads the stored openings."""

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner
from sqlalchemy import event, func, insert, select, update
from sqlalchemy.engine import Engine

from farm.cli import farm
from farm.openings.decorations import FEWEST
from farm.openings.estimate import FEWEST_PAIRS
from farm.openings.evidence import SET_BY_HAND
from farm.openings.stored import update_openings
from farm.openings.titles import Decorations
from farm.state.db import make_engine
from farm.state.models import JobPostingRow, OpeningKey, OpeningPosting, OpeningRow, OpeningWeight
from farm.state.posting_fields import POSTING_FIELDS
from farm.state.store import KeywordStore
from tests.integration.test_openings_explain import posting
from tests.migrated import migrated
from tests.unit.test_openings_decorations import corpus, one_job
from tests.unit.test_openings_weights import unlabelled

DAY_1 = datetime(2026, 5, 8, 2, tzinfo=UTC)
PAIR = {"companyName": "抖音", "fullCompanyName": "北京字节跳动科技有限公司"}
FIRST = [
    posting("boss", "b1", "Python开发工程师", "抖音", "20-30K"),
    posting("qcwy", "q1", "【急招】Python开发工程师", "北京字节跳动科技有限公司", "2.5-3.5万", PAIR),
    posting("boss", "b2", "Java工程师", "美团", "15-25K"),
]
SECOND = [
    posting("zhilian", "z1", "Python开发工程师（双休）", "北京字节跳动科技有限公司", "25000-35000元"),
    posting("zhilian", "z2", "Java工程师", "北京三快在线科技有限公司", "15000-20000元"),
    posting("qcwy", "q2", "数据分析师", "百度在线网络技术（北京）有限公司", "2-3万"),
]


def run(db_url, *args):
    result = CliRunner().invoke(farm, ["--db-url", db_url, "openings", *args])
    assert result.exit_code == 0, result.output
    return result.output


def stored(engine):
    with engine.connect() as connection:
        openings = connection.execute(select(OpeningRow.__table__).order_by(OpeningRow.id)).all()
        members = connection.execute(
            select(JobPostingRow.source, JobPostingRow.job_id, OpeningPosting.opening_id, OpeningPosting.why)
            .join(JobPostingRow, JobPostingRow.id == OpeningPosting.posting_id)
            .order_by(JobPostingRow.source, JobPostingRow.job_id)
        ).all()
    return [tuple(row) for row in openings], [tuple(row) for row in members]


def test_each_days_postings_join_the_stored_openings_as_a_rebuild_would(db_url):
    migrated(db_url)
    engine = make_engine(db_url)
    store = KeywordStore(engine)
    store.upsert_postings(FIRST, DAY_1)
    assert run(db_url, "update") == "3 postings put in openings, 2 openings opened; 2 stored\n"
    store.upsert_postings(SECOND, DAY_1 + timedelta(days=1))
    # only the day's three are clustered: two join the stored openings (美团 is 三快在线 to no rule: its own)
    assert run(db_url, "update") == "3 postings put in openings, 2 openings opened; 4 stored\n"
    assert run(db_url, "update") == "0 postings put in openings, 0 openings opened; 4 stored\n"
    kept = stored(engine)
    assert [(source, job_id, opening) for source, job_id, opening, _ in kept[1]] == [
        ("boss", "b1", 1),
        ("boss", "b2", 2),
        ("qcwy", "q1", 1),
        ("qcwy", "q2", 3),
        ("zhilian", "z1", 1),
        ("zhilian", "z2", 4),
    ]
    assert run(db_url, "update", "--rebuild") == "6 postings put in openings, 4 openings opened; 4 stored\n"
    assert stored(engine) == kept
    store.close()


def test_explain_reads_the_stored_opening_until_a_rebuild(sqlite_url):
    migrated(sqlite_url)
    engine = make_engine(sqlite_url)
    store = KeywordStore(engine)
    store.upsert_postings(FIRST, DAY_1)
    run(sqlite_url, "update")
    joined = "joined opening 1: company equal ('字节跳动' ~ '字节跳动'), title 1.00 alike"
    assert joined in run(sqlite_url, "explain", "qcwy", "q1")
    with engine.begin() as connection:  # the title a clustering now would not join
        connection.execute(
            update(JobPostingRow).where(JobPostingRow.job_id == "q1").values(title="Python开发工程师实习生")
        )
    assert joined in run(sqlite_url, "explain", "qcwy", "q1")
    run(sqlite_url, "update", "--rebuild")
    assert run(sqlite_url, "explain", "qcwy", "q1").splitlines()[1].startswith("opened opening 3: no opening")
    store.close()


def test_an_update_takes_back_only_the_stored_openings_its_new_postings_may_join(sqlite_url, monkeypatch):
    """One company's fifty titles stored; a new posting of one of them takes back that opening, not the
    others its blocking keys name (alike enough to share a key, not to be one job)."""
    from farm.openings.cluster import Clusterer, blocking_keys

    migrated(sqlite_url)
    engine = make_engine(sqlite_url)
    store = KeywordStore(engine)
    roles = [f"{field}{kind}" for field in ("数据", "后端", "前端", "测试", "运维") for kind in "甲乙丙丁戊己庚辛壬癸"]
    store.upsert_postings(
        [posting("boss", f"b{n}", f"{role}工程师", "字节跳动", "20-30K") for n, role in enumerate(roles)], DAY_1
    )
    assert run(sqlite_url, "update") == "50 postings put in openings, 50 openings opened; 50 stored\n"
    keys = blocking_keys("北京", "字节跳动", "后端丙工程师", 0.85)
    with engine.connect() as connection:  # the keys are a coarse filter: they name other titles too
        named = connection.execute(select(func.count()).where(OpeningKey.block_key.in_(keys))).scalar_one()
    assert named > 1
    restored = []
    monkeypatch.setattr(Clusterer, "restore", lambda self, opening: restored.append(opening) or self._register(opening))
    store.upsert_postings([posting("qcwy", "q1", "后端丙工程师+五险一金", "北京字节跳动科技有限公司", "2-3万")], DAY_1)
    assert run(sqlite_url, "update") == "1 postings put in openings, 0 openings opened; 50 stored\n"
    assert [opening.title_key for opening in restored] == ["后端丙工程师"]
    store.close()


def rows_of(postings, seen):
    rows = []
    for p in postings:
        row = dict.fromkeys(POSTING_FIELDS)
        row.update(source=p.source, job_id=p.job_id, title=p.title, company=p.company, city=p.city, area=p.area)
        row.update(degree=p.degree, experience=p.experience, salary_min=p.salary_min, salary_max=p.salary_max)
        rows.append({**row, "tags": [], "raw": {}, "first_seen_at": seen, "last_seen_at": seen})
    return rows


def weights_stored(engine):
    with engine.connect() as connection:
        rows = connection.execute(select(OpeningWeight.field, OpeningWeight.outcome, OpeningWeight.weight)).all()
    return sorted(tuple(row) for row in rows)


def test_the_first_update_with_pairs_enough_learns_the_weights_and_the_updates_after_it_weigh_with_them(sqlite_url):
    migrated(sqlite_url)
    engine = make_engine(sqlite_url)
    postings = unlabelled()
    with engine.begin() as connection:
        connection.execute(insert(JobPostingRow), rows_of(postings[:4], DAY_1))
    few = update_openings(engine)
    assert few.weights is SET_BY_HAND and weights_stored(engine) == []  # too few pairs: nothing learnt
    with engine.begin() as connection:
        connection.execute(insert(JobPostingRow), rows_of(postings[4:], DAY_1 + timedelta(days=1)))
    first = update_openings(engine)
    assert first.weights.pairs >= FEWEST_PAIRS and first.weights != SET_BY_HAND
    assert weights_stored(engine) == sorted(first.weights.rows())
    later = [replace(p, job_id=p.job_id + "x", city="上海") for p in postings]
    with engine.begin() as connection:
        connection.execute(insert(JobPostingRow), rows_of(later, DAY_1 + timedelta(days=2)))
    assert update_openings(engine).weights == first.weights  # read back, not learnt again
    rebuilt = update_openings(engine, rebuild=True)  # learnt again from every posting
    assert rebuilt.weights.pairs > first.weights.pairs and weights_stored(engine) == sorted(rebuilt.weights.rows())


class Killed(Exception):
    pass


def test_an_update_in_batches_gives_the_openings_of_one_and_one_killed_midway_is_finished_by_the_next(tmp_path):
    postings = unlabelled()  # 1,600 postings of 400 companies on two sites, pairs enough to learn the weights
    postings += [replace(p, source="zhilian", job_id="z" + p.job_id[1:]) for p in postings[::7]]
    engines = []
    for name in ("one", "batched", "killed"):
        url = f"sqlite:///{tmp_path / name}.db"
        migrated(url)
        engine = make_engine(url)
        with engine.begin() as connection:
            half = len(postings) // 2
            connection.execute(insert(JobPostingRow), rows_of(postings[half:], DAY_1))
            connection.execute(insert(JobPostingRow), rows_of(postings[:half], DAY_1 + timedelta(days=1)))
        engines.append(engine)
    one, batched, killed = engines
    assert update_openings(one, at_once=len(postings)).postings == len(postings)
    done = update_openings(batched, at_once=150)
    assert done.postings == len(postings) and done.weights.pairs >= FEWEST_PAIRS
    assert stored(batched) == stored(one)

    batches = []

    def kill_at_the_fourth_batch(conn, cursor, statement, parameters, context, executemany):
        if statement.upper().startswith("INSERT INTO OPENING_POSTING"):
            batches.append(statement)
            if len(batches) == 4:
                raise Killed

    event.listen(killed, "before_cursor_execute", kill_at_the_fourth_batch)
    with pytest.raises(Killed):
        update_openings(killed, at_once=150)
    event.remove(killed, "before_cursor_execute", kill_at_the_fourth_batch)
    with killed.connect() as connection:  # three batches kept, the fourth rolled back
        assert connection.execute(select(func.count()).select_from(OpeningPosting)).scalar_one() == 450
    assert update_openings(killed, at_once=150).postings == len(postings) - 450
    assert stored(killed) == stored(one)


def test_the_title_decorations_learnt_with_the_weights_are_stored_beside_them_and_weigh_every_update_after(
    sqlite_url,
):
    migrated(sqlite_url)
    engine = make_engine(sqlite_url)
    postings = unlabelled() + [replace(p, city="上海") for p in corpus(2 * FEWEST)]
    with engine.begin() as connection:
        connection.execute(insert(JobPostingRow), rows_of(postings, DAY_1))
    first = update_openings(engine)
    assert first.decorations == Decorations(frozenset({"大厂直推"}), frozenset({"可转正"}))
    assert ("title_suffix", "可转正", 0.0) in weights_stored(engine)
    pair = [replace(p, city="上海") for p in one_job(99, "Java开发工程师", "Java开发工程师-可转正")]
    with engine.begin() as connection:
        connection.execute(insert(JobPostingRow), rows_of(pair, DAY_1 + timedelta(days=1)))
    later = update_openings(engine)
    assert (later.postings, later.openings, later.decorations) == (2, 1, first.decorations)


@pytest.mark.parametrize("database_url", ["mariadb", "postgresql"], indirect=True)
def test_an_update_runs_without_the_read_deadline_its_scan_of_every_posting_outlasts(database_url):
    """The waiting postings' scan reads every posting's id: on a large table it outlasts FARM_DB_TIMEOUT."""
    migrated(database_url)
    engine = make_engine(database_url, timeout=1)
    with engine.begin() as connection:
        connection.execute(insert(JobPostingRow), rows_of(unlabelled()[:40], DAY_1))
    deadlines = []

    def deadline(conn, cursor, statement, parameters, context, executemany):
        driver = conn.connection.dbapi_connection
        if engine.dialect.name == "postgresql":
            deadlines.append(driver.execute("SHOW statement_timeout").fetchone()[0])
        else:
            deadlines.append(driver._read_timeout)

    event.listen(Engine, "before_cursor_execute", deadline)  # the update's own engine too
    try:
        assert update_openings(engine).postings == 40
    finally:
        event.remove(Engine, "before_cursor_execute", deadline)
        engine.dispose()
    assert deadlines and set(deadlines) == {None if engine.dialect.name != "postgresql" else "0"}
