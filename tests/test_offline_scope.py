"""The offline planner asks or declines before planning: nothing to look at is asked
about; a question wholly about another platform or a forecast goes to the analysis."""

from __future__ import annotations

import pytest

from context_loader.loader import ContextLoader
from deepagent.core.schema import CallHuman, FinalAnalysis
from tests.plans import decision_of


async def test_a_question_with_nothing_to_look_at_is_asked_about(
    full_loader: ContextLoader,
) -> None:
    """No subject, period, figure, ranking or aspect: the closest case would answer another
    question (gibberish got an audience report)."""
    decision = await decision_of(full_loader, "asdfghjkl qwertyuiop zxcvbnm")
    assert isinstance(decision.action, CallHuman), decision.action


@pytest.mark.parametrize(
    ("question", "declined"),
    [
        ("拼多多上面霜上个月卖了多少", True),
        ("Predict next month's sunscreen sales", True),
        ("Sunscreen top products last month. Also give me Amazon's list.", False),
        ("面霜上个月在京东卖了多少？跟我们平台比呢", False),
        ("Forecast sunscreen GMV for the next quarter from its last six months", False),
        ("could you predict next year's 618 sales of sunscreen?", True),  # no data named
    ],
)
async def test_a_question_wholly_about_another_platform_or_a_forecast_is_declined(
    full_loader: ContextLoader, question: str, declined: bool
) -> None:
    """Everything asked is tied to another platform or a forecast: this marketplace's
    figures would answer another question (they were planned as if the platform word were
    not there). A sentence about this marketplace, a contrast with it, or months to base
    a forecast on are planned; the analysis states the part it cannot cover."""
    decision = await decision_of(full_loader, question)
    assert isinstance(decision.action, FinalAnalysis) == declined, decision.action
