"""farm's own signal, sent by the keyword registry (farm.crawl.registry).

An ``object()`` like Scrapy's; handlers take the keyword arguments named here.
"""

# A keyword this crawl held has ended, its end settled (written, or found written):
# keyword_ended(lease, outcome, spider). ``outcome`` is a farm.crawl.keywordrun.Outcome,
# its ``kind`` one of "completed", "failed", "blocked", "released", "lost". Sent once per
# keyword; the keyword has left the crawl's runs, the page window and the checkpoint.
keyword_ended = object()
