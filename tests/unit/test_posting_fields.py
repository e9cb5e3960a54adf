"""One list of posting fields: the item, the model, the migration and the upsert all read it."""

from sqlalchemy import JSON, BigInteger, String, create_engine, inspect

from farm.items import JobPosting
from farm.state import posting_fields, postings
from farm.state.migrate import upgrade
from farm.state.models import JobPostingRow, UtcDateTime
from farm.state.posting_fields import COLUMNS, KEY, POSTING_FIELDS, REF, SALARY_COLUMNS, TEXT, TIME, UPDATED
from farm.state.posting_fields import JSON as JSON_KIND

TABLE = JobPostingRow.__table__


def test_the_item_has_the_fields_a_posting_carries():
    assert tuple(JobPosting.fields) == POSTING_FIELDS
    assert JobPosting.fields["title"] == {"kind": TEXT, "length": 255}
    assert not {"first_seen_at", "last_seen_at", "id"} & set(JobPosting.fields)


def test_the_model_has_the_lists_columns_in_its_order_with_its_limits():
    salary = [name for name, _ in SALARY_COLUMNS]
    assert [column.name for column in TABLE.columns] == ["id", *(field.name for field in COLUMNS), *salary]
    expected_type = {KEY: String, TEXT: String, JSON_KIND: JSON, TIME: UtcDateTime, REF: BigInteger}
    for field in COLUMNS:
        column = TABLE.c[field.name]
        assert isinstance(column.type, expected_type[field.kind]), field.name
        assert getattr(column.type, "length", None) == field.length, field.name
        assert column.nullable == (field.kind != KEY and not field.by_store), field.name
    lengths = {field.name: field.length for field in COLUMNS if field.length}
    assert lengths == {
        "source": 16,
        "job_id": 64,
        "title": 255,
        "salary": 64,
        "company": 255,
        "city": 64,
        "area": 128,
        "experience": 64,
        "degree": 64,
        "url": 512,
    }


def test_the_upsert_writes_and_updates_the_lists_fields():
    assert postings.FIELDS == POSTING_FIELDS
    assert set(postings.COLUMNS) == {field.name for field in COLUMNS} | {name for name, _ in SALARY_COLUMNS}
    assert postings.UPDATED == UPDATED
    assert set(UPDATED) == set(POSTING_FIELDS) - {"source", "job_id", "keyword_id"} | {"last_seen_at"}
    sql = postings._sql("sqlite")
    assert f"({', '.join(postings.COLUMNS)})" in sql
    assert all(f"{name} = excluded.{name}" in sql for name in UPDATED)
    assert "keyword_id = excluded" not in sql and "first_seen_at = excluded" not in sql


def test_the_migration_creates_job_posting_from_the_list(tmp_path, monkeypatch):
    # a longer title in the list is a longer title in the table the migration creates
    wider = tuple(posting_fields.Field("title", TEXT, 300) if f.name == "title" else f for f in COLUMNS)
    monkeypatch.setattr(posting_fields, "COLUMNS", wider)
    url = f"sqlite:///{tmp_path / 'farm.db'}"
    upgrade(url)  # the migrations themselves, not a copy of a database they made before the patch
    engine = create_engine(url)
    try:
        columns = {column["name"]: column for column in inspect(engine).get_columns("job_posting")}
    finally:
        engine.dispose()
    assert list(columns) == ["id", *(field.name for field in COLUMNS), *(name for name, _ in SALARY_COLUMNS)]
    assert columns["title"]["type"].length == 300
    assert columns["job_id"]["type"].length == 64 and not columns["job_id"]["nullable"]


def test_every_field_has_a_kind_the_path_knows_and_text_a_length():
    for field in COLUMNS:
        assert field.kind in (KEY, TEXT, JSON_KIND, TIME, REF), field.name
        assert (field.length is not None) == (field.kind in (KEY, TEXT)), field.name
