"""The three MySQL pipelines plain Scrapy users usually write, for bench.mariadb_bench.

Each stores every posting in one table on the server of ``MYSQL_URL`` (a SQLAlchemy
URL; the pipelines use pymysql directly), upserting on (source, job_id):
- CommitPerItem: an INSERT and a commit for every item, on the reactor thread;
- Batched: items gathered and written with ``executemany`` every BATCH items and at close;
- Adbapi: Twisted's ``adbapi`` connection pool, one interaction (a commit) an item, on its threads.
"""

import json

import pymysql
from sqlalchemy.engine import make_url
from twisted.enterprise import adbapi

BATCH = 100
COLUMNS = ("source", "job_id", "title", "salary", "company", "city", "url", "raw")
INSERT = (
    f"INSERT INTO posting ({', '.join(COLUMNS)}) VALUES ({', '.join(['%s'] * len(COLUMNS))}) "
    "ON DUPLICATE KEY UPDATE title = VALUES(title), salary = VALUES(salary)"
)
TABLE = (
    "CREATE TABLE IF NOT EXISTS posting (id BIGINT AUTO_INCREMENT PRIMARY KEY, source VARCHAR(16), "
    "job_id VARCHAR(128), title VARCHAR(256), salary VARCHAR(64), company VARCHAR(256), city VARCHAR(64), "
    "url VARCHAR(1024), raw MEDIUMTEXT, UNIQUE KEY uq_posting (source, job_id)) CHARACTER SET utf8mb4"
)


def _connect_args(settings) -> dict:
    url = make_url(settings["MYSQL_URL"])
    return {
        "host": url.host,
        "port": url.port or 3306,
        "user": url.username,
        "password": url.password or "",
        "database": url.database,
        "charset": "utf8mb4",
    }


def _row(item) -> tuple:
    raw = item.get("raw")
    return tuple(json.dumps(raw, ensure_ascii=False) if name == "raw" else item.get(name) for name in COLUMNS)


class CommitPerItem:
    def __init__(self, settings):
        self.conn = pymysql.connect(**_connect_args(settings))
        with self.conn.cursor() as cursor:
            cursor.execute(TABLE)

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.settings)

    def process_item(self, item, spider):
        with self.conn.cursor() as cursor:
            cursor.execute(INSERT, _row(item))
        self.conn.commit()
        return item

    def close_spider(self, spider):
        self.conn.close()


class Batched(CommitPerItem):
    def __init__(self, settings):
        super().__init__(settings)
        self.rows = []

    def process_item(self, item, spider):
        self.rows.append(_row(item))
        if len(self.rows) >= BATCH:
            self.flush()
        return item

    def flush(self):
        with self.conn.cursor() as cursor:
            cursor.executemany(INSERT, self.rows)
        self.conn.commit()
        self.rows = []

    def close_spider(self, spider):
        if self.rows:
            self.flush()
        super().close_spider(spider)


class Adbapi:
    def __init__(self, settings):
        args = _connect_args(settings)
        with pymysql.connect(**args) as conn, conn.cursor() as cursor:
            cursor.execute(TABLE)
        self.pool = adbapi.ConnectionPool("pymysql", **args, cp_reconnect=True)

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.settings)

    def process_item(self, item, spider):
        done = self.pool.runOperation(INSERT, _row(item))
        done.addCallback(lambda _: item)
        return done

    def close_spider(self, spider):
        self.pool.close()
