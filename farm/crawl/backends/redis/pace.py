"""The pace of a site every worker shares: its interval and back-off kept in Redis beside the queue."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from farm.crawl.pace import SitePace

if TYPE_CHECKING:
    from farm.crawl.backends.redis.link import RedisLink
    from farm.crawl.backends.redis.queue import SharedQueue


class SharedPace(SitePace):
    """The pace of a site every worker shares (FARM_REDIS_URL): the shared queue hands out
    requests at the site's rate (farm/crawl/backends/redis/scripts/pop.lua), and a block or an outage
    any worker meets slows every worker. This worker keeps a copy for the requests that
    stay with it (retries); its pops carry the interval and its back-off, so that Redis
    losing the pace (a flush, a restart) does not lose the site's pace."""

    def __init__(
        self,
        rate: float,
        base_delay: float,
        max_delay: float,
        link: RedisLink,
        queue: SharedQueue,
        **kwargs: Any,
    ) -> None:
        super().__init__(rate, base_delay, max_delay, **kwargs)
        self.link = link
        self.queue = queue
        self.link.run(queue.set_rate, rate)

    def back_off(self, retry_after: float | None = None) -> None:
        super().back_off(retry_after)
        # a call id: made again after a lost reply, it backs off once
        self.link.run(self.queue.back_off, self.base_delay, self.max_delay, retry_after, self.queue.new_call())

    def eased(self) -> None:
        if self.penalty:  # one Redis call per good answer only while backed off
            super().eased()
            self.link.run(self.queue.ease, self.base_delay, self.max_delay, self.queue.new_call())
