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

from pydantic import BaseModel, ConfigDict, GetCoreSchemaHandler, GetPydanticSchema
from pydantic.alias_generators import to_camel
from pydantic_core import core_schema


class Wire(BaseModel):
    """Base of all API types: camelCase aliases, unknown fields rejected, no type coercion.

    ``strict=True`` mirrors Go's JSON decoder: ``count: "2"`` or ``string: yes`` (a YAML
    1.1 boolean) is an error, not silently converted.
    """

    model_config = ConfigDict(
        extra="forbid",
        validate_by_alias=True,
        validate_by_name=False,  # snake_case keys are unknown fields, as the API server reads them
        strict=True,
        alias_generator=to_camel,
        serialize_by_alias=True,
    )


_M = TypeVar("_M", bound=BaseModel)

# Kubernetes' quantity grammar (apimachinery resource.Quantity), checked at decode time
# as the API server does; full parsing and arithmetic live in drakit.quantity.
_QUANTITY_RE = re.compile(r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+|Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?$")
# ``$`` is the end of the text for pydantic's (Rust) regex engine: no newline before it.


QUANTITY_ERROR = "quantity"
"""pydantic's error type for a value that is no quantity; the loader words it by the input's type
(:data:`QUANTITY_TYPE_MESSAGE` for a non-string, :data:`QUANTITY_SYNTAX_MESSAGE` for a string)."""
QUANTITY_TYPE_MESSAGE = "must be a quantity (a string or a number)"
QUANTITY_SYNTAX_MESSAGE = ("quantities must match the regular expression "
                           "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


def _quantity_schema(_tp: Any, _handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
    # Checked in pydantic's core, not by a Python call per value: an inventory holds ~15 per node.
    # JSON numbers are accepted by the API server for quantities; all are kept as written.
    return core_schema.union_schema(
        [core_schema.str_schema(pattern=_QUANTITY_RE.pattern, strict=True),
         core_schema.int_schema(strict=True), core_schema.float_schema(strict=True)],
        mode="left_to_right", custom_error_type=QUANTITY_ERROR, custom_error_message=QUANTITY_TYPE_MESSAGE)


Quantity = Annotated[str | int | float, GetPydanticSchema(_quantity_schema)]
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
