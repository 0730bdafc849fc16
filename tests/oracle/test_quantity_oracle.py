"""Quantity parsing and printing at the int32 exponent limit, asked of upstream's code.

Pins what ``tests/unit/test_quantity.py`` relies on: Go parses ``10000000e2147483643`` to
``1e-2147483646`` (the exponent wraps as an int32) and prints it so.  Parsing that printed text
back is where Go and drakit differ only in speed: Go materialises a two-billion-digit power of
ten (it does not answer within the time this test allows), drakit rounds up to the nano at once.
"""

from __future__ import annotations

import pytest

from drakit.quantity import Quantity
from tests.oracle.client import Oracle


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("10000000e2147483643", id="wrap"),
        pytest.param("-10000000e2147483643", id="wrap-negative"),
        pytest.param("1e2147483647", id="int32-max"),
    ],
)
def test_parse_and_print_agree_with_go(oracle: Oracle, text: str) -> None:
    answer = oracle.cel({"expression": f'quantity("{text}")'})
    assert answer.get("type") == "quantity", answer
    assert str(Quantity.parse(text)) == answer["value"]
