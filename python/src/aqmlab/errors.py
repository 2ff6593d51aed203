"""The one-line error every user mistake becomes (`aqmlab.scenario.ScenarioError`)."""

from __future__ import annotations

__all__ = ["ScenarioError"]


class ScenarioError(ValueError):
    """A scenario problem, described in one line."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))
