"""The one item farm scrapes."""

import scrapy

from farm.state.posting_fields import BY_NAME, POSTING_FIELDS


class JobPosting(scrapy.Item):
    """A job posting as the site lists it, keyed by (source, job_id).

    Its fields are the columns of ``job_posting`` that a posting carries,
    farm.state.posting_fields.POSTING_FIELDS, where each is described; each
    Field holds its kind and, for text, its length in characters.
    """

    # the class namespace: scrapy's ItemMeta collects the Fields from it
    locals().update(
        {name: scrapy.Field(kind=BY_NAME[name].kind, length=BY_NAME[name].length) for name in POSTING_FIELDS}
    )

    # Not a field (not stored, not exported): the (lease, page) the posting came
    # from, so the pipeline can tell the progress extension it was handled.
    _farm_page = None
