"""How a claim is asked for: ``POST /api/v1/keyword/available``, never a GET.

A GET is what a browser sends for an ``<img>`` or a link from any page, so a GET only
lists; a GET that asks to reserve gets 405 naming the POST. The POST takes the claim's
parameters in a JSON body or in the query (``curl -X POST '…?source=boss'``), not both.
A body is read only under a JSON Content-Type, as FastAPI reads every other route's
(415 else): a web page's form cannot send one without the browser asking first.
"""

import json
from email.message import Message

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError

from farm.api.schemas import ClaimIn
from farm.errors import ApiRefusal

FALSE = ("", "0", "false", "f", "no", "n", "off")  # what pydantic reads as a false bool
CLAIM = "POST /api/v1/keyword/available"
NOT_JSON_TYPE = "the body is not sent as JSON: send it with Content-Type: application/json"

# the document's request body: the server reads it itself, to take the query form as well
CLAIM_BODY = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": ClaimIn.model_json_schema()}},
        "description": "The claim's parameters; or, with no body, the same parameters in the query.",
    }
}


async def never_claims(request: Request) -> None:
    """A GET with ``reserve`` true: 405 naming the POST (Allow: POST)."""
    reserve = request.query_params.get("reserve")
    if reserve is not None and reserve.strip().lower() not in FALSE:
        request.app.state.outcomes.add("get_claims")
        raise ApiRefusal(
            405,
            {
                "detail": f"a GET only lists keywords; claim them with {CLAIM} (the same "
                f"parameters, in the query or a JSON body)"
            },
            {"Allow": "POST"},
        )


async def claim_params(request: Request) -> ClaimIn:
    """The claim's parameters: from the JSON body (strict, as every body), else from the query."""
    body = await request.body()
    if body.strip():
        if not json_content(request.headers.get("content-type")):
            raise ApiRefusal(415, {"detail": NOT_JSON_TYPE})
        if request.query_params:
            raise _invalid("query", "give the claim's parameters in the query or in the JSON body, not both")
        return body_claim(body)
    query = request.query_params
    # the URL of a GET claim, sent as a POST, claims too; reserve=false is refused (422)
    data = {
        name: query.get(name)
        for name in query
        if name != "skip_partial" and not (name == "reserve" and query.get(name).strip().lower() not in FALSE)
    }
    if "skip_partial" in query:
        data["skip_partial"] = query.getlist("skip_partial")
    return _validated(data, "query", strict=False)


def json_content(content_type: str | None) -> bool:
    """A body of ``content_type`` is JSON (application/json, application/*+json), as FastAPI reads it."""
    if not content_type:
        return False
    message = Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (subtype == "json" or subtype.endswith("+json"))


def body_claim(body: bytes) -> ClaimIn:
    """The claim a JSON body holds, read strictly as every body (the route's, and farm.api.fastclaim's);
    RequestValidationError when the body is not JSON or nested too deeply to read (400), or not a
    valid claim (422)."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:  # as FastAPI reports a body that is not JSON
        position = exc.pos if isinstance(exc, json.JSONDecodeError) else 0
        raise _not_json(position, getattr(exc, "msg", str(exc))) from None
    except RecursionError:  # arrays or objects nested about a thousand deep: no claim is
        raise _not_json(0, "nested too deeply") from None
    try:
        return _validated(data, "body", strict=True)
    except RecursionError:  # nested just within the parser's reach, past the validator's
        raise _not_json(0, "nested too deeply") from None


def _not_json(position: int, why: str) -> RequestValidationError:
    return RequestValidationError(
        [
            {
                "type": "json_invalid",
                "loc": ("body", position),
                "msg": "JSON decode error",
                "input": {},
                "ctx": {"error": why},
            }
        ]
    )


def _validated(data, where: str, strict: bool) -> ClaimIn:
    try:
        return ClaimIn.model_validate(data, strict=strict)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        raise RequestValidationError([{**error, "loc": (where, *error["loc"])} for error in errors]) from None


def _invalid(where: str, message: str) -> RequestValidationError:
    return RequestValidationError([{"type": "value_error", "loc": (where,), "msg": message, "input": None}])
