"""What the rules policy takes from the caller's words: a wrong number, a request for the owner, the facts.

Parroting the preset whatever was asked was the rules policy's main failing (a wrong-number caller asking
about a teacher's parents' meeting got "我记下了，会转告他"; a caller's details — a time, a place, a count —
were acknowledged with "好的，我一定转告机主", dropping them).  These pure functions read the caller's turn:

- :func:`wrong_number` finds whom the caller asked for ("王老师吗？", "是顺达物流的李经理吧？",
  "我的车修好了没") when the owner's preset and goal never mention them: the call is for someone else;
- :func:`request_for_owner` turns "你让他明天给我回个话" into what the assistant promises
  ("我会让他明天给您回个话");
- :func:`facts` keeps the informative part of a turn ("那个，就是，地方还是老地方，晚上六点" →
  "地方还是老地方，晚上六点") in the assistant's words (我 → 您), to say back when taking a message.
"""

from __future__ import annotations

import re
from typing import Final

_TITLE = r"(?:老师|经理|医生|大夫|主任|律师|校长|老板|会计|师傅)"
WRONG_PERSON: Final = re.compile(
    rf"(?:^|[，,。？?！!\s喂])(?:请问)?(?:是|找)?((?:[\u4e00-\u9fff]{{2,6}}的)?[\u4e00-\u9fff]{{1,2}}{_TITLE})"
    r"(?:吗|吧|在吗|在不在|呢)"
)
WRONG_ERRAND: Final = re.compile(r"(?:我的|我那)?车子?(?:修好|保养好|维修好|做好)|修车|提车")
CANCEL: Final = re.compile(r"取消|不坐了|不坐车|不用来|不要了|不用送|退掉|退单")
_REQUEST: Final = re.compile(r"(?:让|叫|请)(?:他|她|机主)([^，,。！!？?；;]{2,20})")
_LEADING: Final = re.compile(r"^(?:(?:喂|哎|嗯|那个|就是|然后|行|好|好的|对|不急|其实|反正|那)[，,、\s]*)+")
_TRAILING: Final = re.compile(r"(?:是吧|对吧|[啊呀吧哈哦嘛呢的了])*[。！!？?，,]*$")
MAX_FACTS: Final = 28  # characters of the caller's words said back: a phone reply, not a transcript


def wrong_number(p: str, known: str) -> str | None:
    """Whom the caller asked for, if the owner's preset and goal (``known``) never mention them; else None."""
    if m := WRONG_PERSON.search(p):
        who = m.group(1)
        if p[max(0, m.start(1) - 2) : m.start(1)] in ("我是", "我叫"):
            return None
        name = who.split("的")[-1]
        if name not in known and who not in known and name[-2:] not in known:
            return who
    if WRONG_ERRAND.search(p) and "车" not in known:
        return "修车店"
    return None


def _for_owner(text: str) -> str:
    """The caller's words as the assistant says them back: 我 → 您, 你 → 机主."""
    text = re.sub(r"我们|我", "您", text)
    return re.sub(r"你们|你", "机主", text)


def request_for_owner(p: str) -> str | None:
    """ "(你)让他X" → "我会让他X" in the assistant's words; None if the caller asks nothing of the owner."""
    m = _REQUEST.search(p)
    if m is None:
        return None
    return f"我会让他{_TRAILING.sub('', _for_owner(m.group(1)))}"


def facts(p: str) -> str:
    """The informative part of a caller turn, said back in the assistant's words ("" if there is none)."""
    clauses = [c for c in re.split(r"[，,。！!？?；;]+", _LEADING.sub("", p)) if c]
    clauses = [_TRAILING.sub("", _LEADING.sub("", c)) for c in clauses]
    clauses = [c for c in clauses if len(c) >= 2]
    kept: list[str] = []
    for c in reversed(clauses):  # the last clauses carry the news ("…，晚上六点")
        if sum(map(len, kept)) + len(c) > MAX_FACTS:
            break
        kept.insert(0, c)
    return _for_owner("，".join(kept))


def dropoff_place(clause: str) -> str:
    """Where a drop-off clause says to leave things ("外卖放门卫室就行" → "门卫室"), or ""."""
    m = re.search(r"放(?:到|在)?([^，,。；;]{1,8}?)(?:就行|就好|就可以|吧|里|$)", clause)
    return m.group(1) if m else ""
