"""Name validators match the whole string, as Go's anchored regexps do (``$`` in Python does not)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from drakit.model.names import dns1123_label, dns1123_subdomain, label_value, qualified_name


@pytest.mark.parametrize("check", [dns1123_label, dns1123_subdomain, label_value, qualified_name])
@pytest.mark.parametrize("value", ["gpu\n", "gpu\r\n", "\ngpu"])
def test_a_newline_is_never_part_of_a_valid_name(check: Callable[[str], list[str]], value: str) -> None:
    assert check(value) != []
    assert check(value.strip()) == []
