"""What the page shows after each update a handler streams: an update leaves out the components whose value did
not change (the page keeps showing them), so each state is the previous one with the update's values applied."""

from __future__ import annotations

from typing import Any, Iterable


def page_states(updates: Iterable[dict[Any, Any]]) -> list[dict[Any, Any]]:
    states: list[dict[Any, Any]] = []
    shown: dict[Any, Any] = {}
    for update in updates:
        shown = {**shown, **update}
        states.append(shown)
    return states
