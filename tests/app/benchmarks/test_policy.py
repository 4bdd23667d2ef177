"""The policy bench: every dialogue's caller lines through the rules policy, scored by the checklist judge."""

from voice.app.benchmarks.policy import low_replies, main, policy_call, score_policy, summarize
from voice.dialogues import bundled_dialogues_path, load_dialogues
from voice.metrics.scoring.judges import make_judge


def test_a_hang_up_makes_the_rest_of_the_call_its_ending():
    d = next(x for x in load_dialogues(bundled_dialogues_path()) if x.scenario == "harassment")
    call, replies = policy_call(d)
    assert call.ended_by == "assistant_hangup" and len(replies) == 1  # declined at once
    assert all(t.after_hangup for t in call.turns[1:]) and "[assistant hung up]" in call.turns[0].heard


def test_scores_per_dimension_and_the_low_replies(capsys):
    dialogues = load_dialogues(bundled_dialogues_path())[:6]
    scored = score_policy(dialogues, make_judge("checklist"))
    rows = summarize(scored)
    assert rows["semantic_understanding"]["n"] > 0 and 1 <= rows["semantic_understanding"]["mean"] <= 5
    assert all(line.count(" turn ") == 1 for line in low_replies(scored))
    assert main(["--json"]) == 0 and '"dimensions"' in capsys.readouterr().out
