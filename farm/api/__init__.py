"""The keyword API: `farm api`, for crawlers that are not Scrapy.

It serves the keyword table over HTTP through the same KeywordStore the spiders
use, so a claim, a page, an end or a heartbeat sent here is exactly the write a
spider makes: atomic claims, writes fenced by the lease token, the page
watermark, day rollover and retries.

    schemas.py  what each endpoint takes and answers (the OpenAPI document)
    routes.py   the endpoints
    claiming.py how a claim is asked for: a POST, its parameters in a body or the query
    fastclaim.py a claim in a JSON body, answered ahead of FastAPI's routing (the call a fleet makes most)
    reads.py    the read-only queries the store has no method for
    auth.py     the bearer token, and where the server may listen without one
    local.py    without a token: this machine's programs only (Host, Origin), never a web page
    limits.py   the request body size limit
    deadline.py uvicorn's HTTP protocol, with a deadline for reading each request and a bound on its head
    logsafe.py  log lines a client cannot forge (control characters escaped)
    app.py      the application: routes, middleware, error answers, the reaper
    server.py   the `farm api` command
    client.py   farm's client (on urllib3), and the loop of a crawler that is not Scrapy
"""
