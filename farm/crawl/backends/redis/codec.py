"""Requests as JSON data, never pickle: whoever can write to Redis cannot run code on a worker.

scrapy-redis pickles ``Request.to_dict()``; unpickling a payload someone wrote into
Redis by hand runs whatever it says. farm writes the same dict as JSON (bytes as
latin-1 text, the lease as plain data) and reads back only what a farm page
request can hold: its own callbacks, no request class to import, a lease that
parses. Anything else is refused with the reason (``BadPayload``).
"""

from collections.abc import Callable
from typing import Any

import orjson
from scrapy import Request, Spider
from scrapy.http.request import _find_method
from scrapy.utils.request import request_from_dict

from farm.crawl.meta import read_stored, stored
from farm.errors import BadPayload

VERSION = 1
# A request's proxy is chosen anew by whichever worker sends it (farm.crawl.proxies); a proxy's URL and its
# Proxy-Authorization header carry credentials, which are never stored in Redis. Scrapy's meta keys of
# the proxy; farm's own (its id) are left out by farm.crawl.meta.stored.
PROXY_META = ("proxy", "_auth_proxy", "_scheme_proxy")
PROXY_HEADER = "Proxy-Authorization"
# the names Request.to_dict finds for LeaseSpider's page callbacks (it keeps one bound method of each)
CALLBACKS = {"parse_search", "_page_callback"}
ERRBACKS = {"page_error", "_page_errback", None}
METHODS = {"GET", "POST"}
# Request's own defaults: a payload leaves them out (each page's request goes to Redis and back, and
# these were a tenth of it), and they are put back as it is read
DEFAULTS = {
    "body": "",
    "cookies": {},
    "encoding": "utf-8",
    "flags": [],
    "cb_kwargs": {},
    "method": "GET",
    "priority": 0,
}


class JsonRequestSerializer:
    """scrapy-redis's serializer interface (``dumps``/``loads`` of ``Request.to_dict``), as JSON."""

    @staticmethod
    def dumps(data: dict[str, Any]) -> bytes:
        return _dumps(data)

    @staticmethod
    def loads(payload: bytes) -> dict[str, Any]:
        return _loads(payload)


def encode(request: Request, spider: Spider | None, names: dict[object, str] | None = None) -> bytes:
    return _dumps(request_dict(request, spider, {} if names is None else names))


def request_dict(request: Request, spider: Spider | None, names: dict[object, str]) -> dict[str, Any]:
    """``request.to_dict(spider=spider)``, the callbacks' names taken from ``names`` (function ->
    its name on the spider, filled as they are found). to_dict finds each name by scanning every
    member of the spider (inspect.getmembers), twice a request, on the Redis thread under the
    crawl's GIL: a request encoded in 40 µs that way, in 5 µs this way."""
    data = {
        "url": request.url,
        "callback": _method_name(spider, request.callback, names),
        "errback": _method_name(spider, request.errback, names),
        "headers": dict(request.headers),
    }
    for attr in request.attributes:
        data.setdefault(attr, getattr(request, attr))
    if type(request) is not Request:
        data["_class"] = f"{type(request).__module__}.{type(request).__name__}"
    return data


def _method_name(spider: Spider | None, method: Callable[..., Any] | None, names: dict[object, str]) -> str | None:
    if not callable(method):
        return method
    function = getattr(method, "__func__", None)
    name = names.get(function)
    if name is None or getattr(spider, name, None) != method:
        name = names[function] = _find_method(spider, method)  # raises as to_dict does
    return name


def decode(payload: bytes, spider: Spider | None) -> Request:
    data = _loads(payload)
    try:
        return request_from_dict(data, spider=spider)
    except (TypeError, ValueError, AttributeError) as exc:
        raise BadPayload(f"cannot be made a request: {exc}") from None


def _dumps(data: dict[str, Any]) -> bytes:
    data = dict(data)
    data["headers"] = {
        _text(name): [_text(value) for value in values]
        for name, values in data["headers"].items()
        if _text(name).lower() != PROXY_HEADER.lower()
    }
    data["body"] = _text(data["body"])
    data["meta"] = stored(data["meta"], PROXY_META)
    data["farm"] = VERSION
    for name, default in DEFAULTS.items():
        if name in data and data[name] == default:
            del data[name]
    return orjson.dumps(data)


def _loads(payload: bytes) -> dict[str, Any]:
    try:
        data = orjson.loads(payload)
    except orjson.JSONDecodeError as exc:
        raise BadPayload(f"not JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("farm") != VERSION:
        raise BadPayload(f"not a farm request (version {VERSION})")
    for name, default in DEFAULTS.items():
        if name not in data:
            data[name] = default.copy() if isinstance(default, dict | list) else default
    if "_class" in data:
        raise BadPayload("names a request class: refused (it would be imported)")
    if data.get("callback") not in CALLBACKS or data.get("errback") not in ERRBACKS:
        raise BadPayload(f"callback {data.get('callback')!r} / errback {data.get('errback')!r} is not farm's")
    if data.get("method") not in METHODS or not isinstance(data.get("url"), str):
        raise BadPayload("no URL, or a method farm does not send")
    meta, headers, body = data.get("meta"), data.get("headers"), data.get("body")
    if not isinstance(meta, dict) or not isinstance(headers, dict) or not isinstance(body, str):
        raise BadPayload("meta, headers or body of the wrong type")
    try:
        read_stored(meta)
        data["headers"] = {_bytes(name): [_bytes(value) for value in values] for name, values in headers.items()}
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise BadPayload(f"not a farm page request: {exc}") from None
    data["body"] = _bytes(body)
    del data["farm"]
    return data


def _text(value: object) -> str:
    return value.decode("latin-1") if isinstance(value, bytes) else str(value)


def _bytes(value: object) -> bytes:
    if not isinstance(value, str):
        raise ValueError(f"{value!r:.50} is not text")
    return value.encode("latin-1")
