"""farm's Scrapy commands (COMMANDS_MODULE): `scrapy crawl` with farm's settings checked first."""
