"""The one item farm scrapes."""

import scrapy


class JobPosting(scrapy.Item):
    """A job posting as the site lists it, keyed by (source, job_id)."""

    source = scrapy.Field()  # boss | qcwy | zhilian
    job_id = scrapy.Field()  # the site's own id: encryptJobId, jobId, number
    title = scrapy.Field()
    salary = scrapy.Field()
    company = scrapy.Field()
    city = scrapy.Field()
    area = scrapy.Field()
    experience = scrapy.Field()
    degree = scrapy.Field()
    tags = scrapy.Field()  # list of str
    published_at = scrapy.Field()  # aware datetime, or None where the site gives none
    url = scrapy.Field()
    keyword_id = scrapy.Field()  # the keyword row the posting was found under
    raw = scrapy.Field()  # the site's item, as parsed from JSON

    # Not a field (not stored, not exported): the (lease, page) the posting came
    # from, so the pipeline can tell the progress extension it was handled.
    _farm_page = None
