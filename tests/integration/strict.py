"""Databases that refuse what does not fit, whatever the server's defaults."""

from sqlalchemy.engine import make_url

# set on every connection, so that a test does not depend on the server's default sql_mode
STRICT_MODE = "SET SESSION sql_mode = 'STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION'"


def strict(db_url: str) -> str:
    """``db_url``; on MySQL/MariaDB with strict mode set by every connection (the URL carries
    it, so a state writer process made from the URL is strict too)."""
    url = make_url(db_url)
    if url.get_backend_name() != "mysql":
        return db_url
    return url.update_query_dict({"init_command": STRICT_MODE}).render_as_string(hide_password=False)
