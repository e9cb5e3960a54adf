"""Item pipelines a project may put before farm's, for the e2e tests."""

import zlib

from scrapy.exceptions import DropItem


class DropSomePostings:
    """Drops about one posting in three (by a hash of its id), as a project's own filter might."""

    def process_item(self, item):
        if zlib.crc32(item["job_id"].encode()) % 3 == 0:
            raise DropItem(f"not wanted: {item['job_id']}")
        return item


def dropped(job_id: str) -> bool:
    return zlib.crc32(job_id.encode()) % 3 == 0
