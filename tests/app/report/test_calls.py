"""The per-call sections of ``report.html``: why a call ended, false starts, and what the assistant heard."""

import re

from tests.fakes import ReferenceBot, reference
from tests.runs import mini
from voice.app.report.build import build_report
from voice.app.report.calls import table
from voice.app.run.dataset import BenchConfig, run_bench
from voice.core.clock import VirtualClock
from voice.lines.memory import MemoryLine
from voice.speech.asr import MemoryASR
from voice.speech.tts.memory import MemoryTTS

TARGET = "pcm+ws://c.test/pcm"


async def one_target_run(folder, bot: ReferenceBot, *dialogues):
    config = BenchConfig(out=folder, targets=(TARGET,), tts="memory", concurrency=2)
    await run_bench(
        list(dialogues),
        config,
        MemoryTTS(),
        MemoryASR([], default="好的"),
        new_clock=VirtualClock,
        line_factories={TARGET: lambda: MemoryLine(bot)},
    )
    return build_report(folder, audio="none")[0].read_text()


def section(html: str, anchor: str) -> str:
    return html.split(f'id="{anchor}"', 1)[1].split("</details>", 1)[0]


async def test_a_failed_call_says_why_and_is_neither_ran_nor_served(tmp_path):
    silent = reference(greeting_ms=None, reply_ms=10**9)
    html = await one_target_run(tmp_path, silent, mini(1))
    call = section(html, "call-0-m-1")
    assert '<p class="fail">failed: assistant_silent: 2 replies in a row never came</p>' in call
    assert "not served" in call.split("</summary>")[0]
    index = html.split("<h2>Calls</h2>")[1].split('<p class="legend">')[0]
    cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", index)]
    # one caller turn said of the two planned: the call failed before the second
    assert cells[5:11] == ["-", "assistant_silent (FAILED)", "1 reached of 2 planned", "0/2", "no", "0"]
    assert cells[-1] == "2 replies in a row never came"
    # on top of the page: the failed calls by kind, with what the kind means and what to do
    top = html.split("<h2>Settings</h2>")[0]
    assert (
        "FAILED CALLS: 1 of 1 call(s) failed" in top and "<li>e.g. 2 replies in a row never came</li>" in top
    )
    assert (
        "assistant_silent: 1 call(s), the assistant stopped answering" in top
        and "what to do:</b> check" in top
    )


async def test_false_starts_and_what_the_assistant_heard_are_shown_per_turn(run_dir):
    html = build_report(run_dir, audio="none")[0].read_text()
    a1 = section(html, "call-0-m-1")  # A answers into the pause of turn 1, then again after it
    assert "1 false start ✗, pause taken over ✗" in a1 and "· 1 false start</span></summary>" in a1
    assert a1.count('class="falsestart"') == 1 and "false start (T1)" in a1
    # A logs its ASR: a column beside what the caller said, marked where the texts differ
    assert "<th>assistant heard (its own ASR)</th>" in a1
    assert (
        '<span class="diff" title="differs from what the caller said">快递到了放那里 / 好的我放门口了</span>'
        in a1
    )
    assert "<td>好的我放门口了</td>" in a1  # the same words as the caller's, punctuation aside: not marked
    # B logs nothing: no such column in its calls
    b1 = section(html, "call-1-m-1")
    assert "its own ASR" not in b1 and b1.count('class="falsestart"') == 1


def test_tables_right_align_the_numeric_columns_only():
    out = table(["a", "b", "c"], [["x", "1", "y"]], numeric={1})
    assert "<td>x</td><td class=n>1</td><td>y</td>" in out and out.startswith('<div class="wide"><table>')
