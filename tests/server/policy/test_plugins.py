"""--policy: the rules, or a factory of your own named module:callable; clear errors otherwise."""

import pytest

from server.config import default_policy_factory
from server.policy.llm_policy import LLMPolicyFactory
from server.policy.plugins import load_policy_factory
from voice.errors import ConfigError

VIEW = {
    "id": "d",
    "scenario": "takeout",
    "preset": {"type": "regular", "text": "外卖放门口。"},
    "owner_goal": "",
}


def test_rules_is_the_built_in_policy():
    assert load_policy_factory("rules") is default_policy_factory


def test_the_documented_example_policy_loads_and_answers():
    policy = load_policy_factory("docs.example_policy:EchoPolicy")(VIEW)
    assert "助理" in policy.greeting()
    first = policy.respond("外卖到了")
    assert "外卖放门口" in first.text and not first.end_call
    assert policy.respond("好的再见").end_call


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("llm", "rules .*or module:callable"),
        ("no_such_module_xyz:Policy", "cannot import"),
        ("docs.example_policy:Nothing", "no callable 'Nothing'"),
    ],
)
def test_a_bad_spec_says_what_is_wrong(spec, problem):
    with pytest.raises(ConfigError, match=problem):
        load_policy_factory(spec)


def test_a_factory_that_makes_no_policy_is_refused_when_it_is_used():
    factory = load_policy_factory("docs.example_policy:Reply")  # a class, but not a policy
    with pytest.raises(ConfigError, match="lacks greeting"):
        factory(VIEW)


def test_an_llm_policy_is_a_factory_like_the_others_and_its_spec_is_checked():
    factory = load_policy_factory("openai:qwen2.5", base_url="http://127.0.0.1:9/v1", timeout_s=3.0)
    assert isinstance(factory, LLMPolicyFactory)
    assert (factory.model, factory.base_url, factory.settings.timeout_s) == (
        "qwen2.5",
        "http://127.0.0.1:9/v1",
        3.0,
    )
    policy = factory(VIEW)  # no request yet: the model is asked only for a reply
    assert policy.greeting() and "外卖放门口" in policy.system
    with pytest.raises(ConfigError, match="openai:MODEL"):
        load_policy_factory("openai:")
