"""core ``v1 List``: a bag of objects of any kind (what ``kubectl get -o yaml`` prints)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from drakit.model._base import Wire, empty
from drakit.model.meta import ListMeta


class List(Wire):
    """Items stay raw dicts; the loader expands them into typed objects one by one."""

    api_version: str | None = None
    kind: str | None = None
    metadata: ListMeta = Field(default_factory=empty(ListMeta))
    items: list[dict[str, Any]] = Field(default_factory=list)
