"""Schemathesis hooks of npm run test:contract (see schemathesis.toml).

- The spec's empty 200: on the operations schemathesis.toml names, an answer of
  200 with an empty body passes; any other answer goes through the built-in
  content-type and response-schema checks unchanged.
- Encrypted card fields: a JWE cannot be drawn from a schema, so the formats
  `jwe-card-number` and `jwe-cvc` of docs/openapi.json are drawn from real
  encryptions of a test card, made by test/contract/schemathesis.ts.
- Plain-text answers are read as text, so links can follow a session id.
"""

import json
import os

import schemathesis
from hypothesis import strategies as st
from schemathesis.specs.openapi import checks as builtin

SPEC_EMPTY_ANSWER = {"GET /api/customer/{id}", "GET /api/transaction/{id}", "GET /api/session", "GET /api/events/{id}"}

LISTS = {"GET /api/customers", "GET /api/transactions", "GET /api/customer/{id}/transactions", "GET /api/disputes", "GET /api/events"}
# The 400s a schema-valid list request can get (shared/list-page.ts LIST_ERROR_MESSAGES).
LIST_STATE_MESSAGES = (
    "cursor is not one this API gave out",
    "cursor was given for another list",
    "from and to must be dates",
    "after names no event of this account",
    "either cursor or after, not both",
)


def _judged_by_builtin(response, case):
    """Whether the built-in check must judge this answer here (elsewhere it runs by itself)."""
    if case.operation.label not in SPEC_EMPTY_ANSWER:
        return False
    return not (response.status_code == 200 and response.content == b"")


@schemathesis.check
def content_type_unless_spec_empty(ctx, response, case):
    return builtin.content_type_conformance(ctx, response, case) if _judged_by_builtin(response, case) else None


@schemathesis.check
def response_schema_unless_spec_empty(ctx, response, case):
    return builtin.response_schema_conformance(ctx, response, case) if _judged_by_builtin(response, case) else None


@schemathesis.check
def positive_data_acceptance_unless_list_state(ctx, response, case):
    """The lists: valid data is accepted, unless it names a cursor, event or date range the service cannot take."""
    if case.operation.label not in LISTS:
        return None
    if response.status_code == 400:
        try:
            message = response.json().get("message", "")
        except ValueError:
            message = ""
        if message.startswith(LIST_STATE_MESSAGES):
            return None
    return builtin.positive_data_acceptance(ctx, response, case)


with open(os.environ["CONTRACT_JWES"], encoding="utf-8") as pool:
    _jwes = json.load(pool)

schemathesis.openapi.format("jwe-card-number", st.sampled_from(_jwes["cards"]))
schemathesis.openapi.format("jwe-cvc", st.sampled_from(_jwes["cvcs"]))


@schemathesis.deserializer("text/plain")
def plain_text(ctx, response):
    """POST /api/session answers its id as text: the link to GET /api/session reads it from there."""
    return response.content.decode("utf-8")
