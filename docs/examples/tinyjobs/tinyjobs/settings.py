"""A Scrapy project that turns farm on with its add-on, and gives only what is its own."""

BOT_NAME = "tinyjobs"
SPIDER_MODULES = ["tinyjobs.spiders"]

# farm's scheduler, middlewares, extensions and pipeline, under this project's own settings
ADDONS = {"farm.addon.FarmAddon": 0}

# where the keyword table and the postings live (farm db upgrade makes the tables)
FARM_DB_URL = "sqlite:///tinyjobs.db"
# the site's address (site.py serves it), and the most pages a keyword may have
FARM_TINYJOBS_BASE_URL = "http://127.0.0.1:8765"
FARM_TINYJOBS_MAX_PAGES = 20
