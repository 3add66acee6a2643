"""One expected tensor of a drafter's layout (layout.py builds the list; family_layout.py a family's)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Component = Literal["trunk", "conv", "selector", "extras"]
COMPONENTS: tuple[Component, ...] = ("trunk", "conv", "selector", "extras")


@dataclass(frozen=True)
class Expected:
    name: str
    shape: tuple[int, ...]
    component: Component
    optional: bool = False  # a loader takes it when stored and builds a default otherwise (no DF201)
