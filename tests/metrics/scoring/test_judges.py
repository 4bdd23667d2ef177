import pytest

from voice.errors import ConfigError
from voice.metrics.scoring.checklist import ChecklistJudge
from voice.metrics.scoring.judges import check_judge, make_judge
from voice.metrics.scoring.llm import LLMJudge


def test_judges_by_name():
    assert isinstance(make_judge("checklist"), ChecklistJudge)
    judge = make_judge("openai:qwen2.5-7b-instruct", base_url="http://127.0.0.1:9/v1", api_key=None)
    assert isinstance(judge, LLMJudge) and judge.name.startswith("openai:qwen2.5-7b-instruct")
    with pytest.raises(ConfigError, match="checklist"):
        make_judge("gpt")


def test_a_judge_is_checked_by_name_without_being_made():
    check_judge("checklist")
    check_judge("openai:any-model")  # no server asked
    with pytest.raises(
        ConfigError, match=r"^--judge: unknown judge 'gpt4': checklist \(offline\) or openai:MODEL"
    ):
        check_judge("gpt4", option="--judge")
    with pytest.raises(ConfigError, match=r"^--judge: 'openai:'"):
        check_judge("openai:", option="--judge")
