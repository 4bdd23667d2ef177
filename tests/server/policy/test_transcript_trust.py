import pytest

from server.policy import keywords as kw
from server.policy import transcript_trust
from server.policy.rules import GREETING, UNCLEAR

# Whisper base's figures for a clean caller line and for a misheard one (the built-in's settings)
CLEAR = {"avg_logprob": -0.26, "no_speech_prob": 0.01, "compression_ratio": 0.82}
MISHEARD = {"avg_logprob": -1.03, "no_speech_prob": 0.01, "compression_ratio": 0.69}


@pytest.mark.parametrize("said", ["嗯", "嗯，", "嗯嗯。", "好。", "对对对", "哦", "啊？", "行", "嗯，好"])
def test_a_lone_backchannel_is_recognised(said: str) -> None:
    assert transcript_trust.is_backchannel(kw.plain(said))


@pytest.mark.parametrize("said", ["好的", "可以", "谢谢", "嗯，拜拜", "是我", "行，放门口吧", "喂"])
def test_words_with_content_are_no_backchannel(said: str) -> None:
    assert not transcript_trust.is_backchannel(kw.plain(said))


def test_only_a_yes_no_question_awaits_a_lone_yes() -> None:
    assert transcript_trust.awaits_answer("好的，请问还有别的事吗？")
    assert transcript_trust.awaits_answer("您好，您可能打错了，这里不是王老师的电话，您核对一下号码好吗？")
    assert not transcript_trust.awaits_answer(GREETING)  # "what is it?": 嗯 answers nothing
    assert not transcript_trust.awaits_answer(
        UNCLEAR
    )  # asked to repeat, the caller's 嗯 comes before the words
    assert not transcript_trust.awaits_answer("好的，我一定转告机主。")
    assert not transcript_trust.awaits_answer("")


def test_understood_means_a_question_or_request_the_policy_listens_for() -> None:
    assert transcript_trust.understood(kw.plain("外卖到了，放哪儿？"))
    assert transcript_trust.understood(kw.plain("让他回个电话"))
    assert not transcript_trust.understood(
        kw.plain("怎么没看到人，您车排尾号386别生得着")
    )  # a scenario word only


def test_the_worst_segment_speaks_for_the_turn() -> None:
    assert transcript_trust.worst([CLEAR, None, MISHEARD]) == {
        "avg_logprob": -1.03,
        "no_speech_prob": 0.01,
        "compression_ratio": 0.82,
    }
    assert transcript_trust.worst([None, {}]) is None
    assert transcript_trust.worst([{"avg_logprob": "bad", "no_speech_prob": 0.2}]) == {"no_speech_prob": 0.2}


def test_doubt_follows_whisper_s_figures() -> None:
    assert transcript_trust.doubt(None) is None and transcript_trust.doubt({}) is None
    assert transcript_trust.doubt(CLEAR) is None
    assert "avg_logprob" in str(transcript_trust.doubt(MISHEARD))
    assert "compression_ratio" in str(transcript_trust.doubt({**CLEAR, "compression_ratio": 2.6}))
    assert "no_speech_prob" in str(transcript_trust.doubt({"avg_logprob": -0.6, "no_speech_prob": 0.9}))
    assert transcript_trust.doubt({"avg_logprob": -0.3, "no_speech_prob": 0.9}) is None  # sure of the words
    assert transcript_trust.doubt({"avg_logprob": True}) is None  # not a figure


def test_a_turn_heard_in_pieces_is_judged_on_its_words_pooled_by_length_not_its_shortest_piece() -> None:
    hello = {"avg_logprob": -0.5, "no_speech_prob": 0.68, "compression_ratio": 0.6}  # a 0.4 s "喂，"
    rest = {"avg_logprob": -0.6, "no_speech_prob": 0.1, "compression_ratio": 0.7}
    assert (
        transcript_trust.doubt(transcript_trust.worst([hello, rest])) is not None
    )  # the worst piece would doubt it
    heard = transcript_trust.pooled([(hello, 0.4), (rest, 2.4)])
    assert heard is not None and transcript_trust.doubt(heard) is None
    assert heard["avg_logprob"] == pytest.approx((-0.5 * 0.4 - 0.6 * 2.4) / 2.8)
    assert heard["compression_ratio"] == 0.7  # the worst: a loop in any piece is a loop
    assert transcript_trust.pooled([(None, 1.0)]) is None and transcript_trust.pooled(
        [(rest, 0.0)]
    ) == transcript_trust.worst([rest])


def test_the_policys_figures_are_the_protocols_and_whispers() -> None:
    from typing import get_type_hints

    from voice.contract.policy import Heard
    from voice.speech.asr import Confidence

    ours = transcript_trust.Heard
    assert get_type_hints(ours) == get_type_hints(Heard) and ours.__optional_keys__ == Heard.__optional_keys__
    assert set(Heard.__optional_keys__) == set(Confidence(-0.2, 0.1, 1.0).to_json())
    assert list(transcript_trust.worst([CLEAR, MISHEARD]) or {}) == list(CLEAR)  # the wire's key order
