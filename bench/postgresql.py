"""A throwaway database on the machine's PostgreSQL, for one benchmark run."""

import os

from bench.mariadb import throwaway_database

SERVER = os.environ.get("FARM_BENCH_POSTGRESQL", "postgresql+psycopg://postgres@127.0.0.1:5432")


def postgresql_database():
    """A context giving the URL of a new, empty database; dropped afterwards (its connections too)."""
    create = "CREATE DATABASE \"{name}\" ENCODING 'UTF8' TEMPLATE template0"
    return throwaway_database(SERVER, "postgres", create, 'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
