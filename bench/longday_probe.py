"""A Scrapy extension for bench.longday_bench: every EVERY responses, one log line with the
process's resident memory and CPU seconds, and its writer child's (read from /proc)."""

import os

from scrapy import signals

EVERY = int(os.environ.get("FARM_BENCH_PROBE_EVERY", "10000"))
PAGE = os.sysconf("SC_PAGE_SIZE")
TICKS = os.sysconf("SC_CLK_TCK")


def rss_and_cpu(pid: int) -> tuple[int, float]:
    """(resident bytes, user + system CPU seconds) of a process, from /proc."""
    with open(f"/proc/{pid}/statm") as file:
        rss = int(file.read().split()[1]) * PAGE
    with open(f"/proc/{pid}/stat") as file:
        fields = file.read().rsplit(")", 1)[1].split()
    return rss, (int(fields[11]) + int(fields[12])) / TICKS


def children(pid: int) -> list[int]:
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as file:
            found += [int(child) for child in file.read().split()]
    return found


class LongDayProbe:
    def __init__(self, crawler):
        self.crawler = crawler
        self.pages = 0
        crawler.signals.connect(self.response_received, signal=signals.response_received)

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def response_received(self, response, request, spider):
        self.pages += 1
        if self.pages % EVERY:
            return
        rss, cpu = rss_and_cpu(os.getpid())
        child_rss, child_cpu = 0, 0.0
        for child in children(os.getpid()):
            try:
                more_rss, more_cpu = rss_and_cpu(child)
            except OSError:
                continue
            child_rss, child_cpu = child_rss + more_rss, child_cpu + more_cpu
        spider.logger.info(
            "longday pages=%d rss=%d cpu=%.3f child_rss=%d child_cpu=%.3f", self.pages, rss, cpu, child_rss, child_cpu
        )
