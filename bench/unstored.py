"""farm's postings pipeline without the storing, for the crawl benchmark's cost breakdown.

Each posting is reported handled, so its page counts done and its keyword
completes as in a real crawl, but it is never encoded nor sent to the state
writer: a farm crawl with this pipeline costs what farm's per-page machinery
(leases, signing at send, block checks, the page window, page progress and
the writer's answers) costs, without the postings' own cost.
"""

from farm.pipelines.sql import SqlPostingsPipeline


class UnstoredPostingsPipeline(SqlPostingsPipeline):
    def process_item(self, item):
        self._handled(item)
        return item
