"""Shared pydantic base for every wire type, and the lossless dump.

Hand-written models instead of generated ones (e.g. from the OpenAPI schema or the
``kubernetes`` client): drakit needs exact control over three things generated code
gets wrong for us — JSON names as aliases with snake_case attributes, "unknown field"
rejection like kubectl's strict decoding, and remembering which fields the input set
(so that an empty list the user wrote survives a round trip, while an omitted one
stays omitted).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, PlainValidator
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError


class Wire(BaseModel):
    """Base of all API types: camelCase aliases, unknown fields rejected, no type coercion.

    ``strict=True`` mirrors Go's JSON decoder: ``count: "2"`` or ``string: yes`` (a YAML
    1.1 boolean) is an error, not silently converted.
    """

    model_config = ConfigDict(
        extra="forbid",
        populate_by_name=True,
        strict=True,
        alias_generator=to_camel,
        serialize_by_alias=True,
    )


_M = TypeVar("_M", bound=BaseModel)

# Kubernetes' quantity grammar (apimachinery resource.Quantity), checked at decode time
# as the API server does; full parsing and arithmetic live in drakit.quantity.
_QUANTITY_RE = re.compile(r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+|Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?\Z")


def _check_quantity(value: Any) -> str | int | float:
    # JSON numbers are accepted by the API server for quantities; keep them as written.
    if isinstance(value, bool):
        raise PydanticCustomError("quantity_type", "must be a quantity (a string or a number)")
    if isinstance(value, int | float):
        return value
    if not isinstance(value, str):
        raise PydanticCustomError("quantity_type", "must be a quantity (a string or a number)")
    if not _QUANTITY_RE.match(value):
        raise PydanticCustomError(
            "quantity_syntax",
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        )
    return value


Quantity = Annotated[str | int | float, PlainValidator(_check_quantity)]
"""A resource quantity kept exactly as written (string, or a JSON number)."""

Time = str
"""RFC 3339 timestamps are kept as the original strings (lossless; not needed for allocation)."""


def empty(cls: type[_M]) -> Callable[[], _M]:
    """A default factory building an empty ``cls`` (untouched by exclude_unset dumps)."""
    return lambda: cls.model_validate({})


def parse_quantity(value: str | int | float) -> Any:
    """Parse a stored quantity with ``drakit.quantity.Quantity.parse`` (imported lazily)."""
    from drakit.quantity import Quantity as _Q  # type: ignore[import-not-found,unused-ignore]

    return _Q.parse(str(value))


def to_wire(obj: BaseModel) -> dict[str, Any]:
    """The object as its JSON dict: aliases, and only the fields the input set.

    Fields set to an empty list/map or an attribute written as ``{}`` stay; omitted
    fields stay omitted, so ``to_wire(Model.model_validate(d)) == d``.
    """
    return obj.model_dump(by_alias=True, exclude_unset=True)
