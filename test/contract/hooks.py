"""Schemathesis hooks of npm run test:contract (see schemathesis.toml).

- The spec's empty 200: on the operations schemathesis.toml names, an answer of
  200 with an empty body passes; any other answer goes through the built-in
  content-type and response-schema checks unchanged.
- What no schema can say: a list's cursor, a cap's or a coupon's decimals, an email holding a card
  number, a session's coupon parameters, a product's usage prices naming meters the account has; the
  400 a schema-valid request gets for it passes (STATE_MESSAGES), any other answer goes through the
  built-in check.
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

LISTS = {
    "GET /api/customers",
    "GET /api/transactions",
    "GET /api/customer/{id}/transactions",
    "GET /api/customer/{id}/usage-events",
    "GET /api/disputes",
    "GET /api/events",
    "GET /api/invoices",
    "GET /api/credit-notes",
}
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


# What no schema can say of a schema-valid request, by operation: the 400 it may get for it.
# A MID's monthly cap has no more decimals than its currency (2 for EUR, 0 for JPY): a
# schema cannot tie a number's decimals to another field. An email holding a card number
# is refused wherever an email is taken.
STATE_MESSAGES = {
    **{label: LIST_STATE_MESSAGES for label in LISTS},
    "POST /admin/accounts/{accountId}/merchant-accounts": ("amount must be a positive number with no more decimals",),
    "PATCH /admin/accounts/{accountId}/merchant-accounts/{id}": ("amount must be a positive number with no more decimals",),
    "POST /admin/accounts/{accountId}/blocked-buyers": ("email must not hold a card number",),
    # A coupon's amountOff has no more decimals than its currency; a session names one coupon, by id or by code, and
    # none for a card update: a query string's parameters cannot depend on each other in a schema.
    "POST /admin/accounts/{accountId}/coupons": ("amount must be a positive number with no more decimals",),
    # A product's usage prices name the account's meters, each once, and their tiers ascend (services/accounts/errors.ts
    # INVALID_USAGE_PRICE): which meters exist is the account's state, and an array's order no schema can say.
    **{
        label: ("usagePrices: each names one of the account's meters",)
        for label in ("POST /admin/accounts/{accountId}/products", "PATCH /admin/accounts/{accountId}/products/{productId}")
    },
    "POST /api/session": ("Send couponId or promotionCode, not both, and neither with customerId",),
    # The stateful phase infers a link from a blocked buyer's `disputeId` to GET /api/disputes/{id} and follows it when
    # the field is null, sending the id "None" as if it were valid (Schemathesis issue 2983): no integer id gets this 400.
    "GET /api/disputes/{id}": ("id must be integer",),
    # A metrics range: real days from 1970, from not after to, at most 1,096 days, one of productId and midId
    # (services/billing/errors.ts): query parameters cannot depend on each other in a schema.
    **{
        label: (
            "from and to must be real days",
            "from must not be after to",
            "from and to may span at most",
            "Send productId or midId, not both",
        )
        for label in ("GET /api/metrics", "GET /admin/accounts/{accountId}/metrics")
    },
}


@schemathesis.check
def positive_data_acceptance_unless_state(ctx, response, case):
    """Valid data is accepted, unless it is one of the 400s STATE_MESSAGES names for the operation."""
    accepted = STATE_MESSAGES.get(case.operation.label)
    if accepted is None:
        return None
    if response.status_code == 400:
        try:
            message = response.json().get("message", "")
        except ValueError:
            message = ""
        if message.startswith(accepted):
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
