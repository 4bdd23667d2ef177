"""What the rules policy reads from the caller's words: whom they asked for, requests, facts."""

import pytest

from server.policy.answers import dropoff_place, facts, request_for_owner, wrong_number


@pytest.mark.parametrize(
    ("line", "who"),
    [
        ("喂，王老师吗？我是小明妈妈，明天家长会几点开始啊？", "王老师"),
        ("喂，是顺达物流的李经理吧？上周那批货的款什么时候打过来？", "顺达物流的李经理"),
        ("喂，我的车修好了没？", "修车店"),
        ("我是张总，有急事，你让他现在马上接电话。", None),  # the caller says who *they* are
        ("喂，你好，我是滴滴司机，我到了，你人在哪儿呢？", None),
        ("你好，顺丰的，有个件需要本人签收，你在家吗？", None),
    ],
)
def test_a_wrong_number_names_whom_the_caller_wanted(line, who):
    assert wrong_number(line, "我在开会，工作上的事请留言") == who


def test_someone_the_owner_mentions_is_no_wrong_number():
    assert wrong_number("王老师吗？家长会几点？", "王老师的家长会我去不了") is None
    assert wrong_number("我的车修好了没？", "车在4S店保养，修好了让他们发短信") is None


def test_requests_for_the_owner_become_promises_in_the_assistants_words():
    assert request_for_owner("行，让他今天给我回个话。") == "我会让他今天给您回个话"
    assert request_for_owner("那个，要不你让他跟我约个时间，我明天再送一趟。") == "我会让他跟您约个时间"
    assert request_for_owner("好嘞，你让他别走开啊，两分钟就到。") == "我会让他别走开"
    assert request_for_owner("外卖到了。") is None


def test_facts_keep_the_news_without_fillers():
    assert facts("行，那个，就是，地方还是老地方，晚上六点。") == "地方还是老地方，晚上六点"
    assert facts("那个合同明天就要签，就是，价格那块还得改一下。") == "合同明天就要签，价格那块还得改一下"
    assert facts("三号楼是吧，好的，我两分钟到。") == "三号楼，您两分钟到"
    assert facts("嗯。") == ""
    assert len(facts("，".join(["这是很长的一句话没有停顿"] * 6))) <= 28


def test_the_drop_off_place_of_a_clause():
    assert dropoff_place("麻烦您放门卫室就行") == "门卫室"
    assert dropoff_place("快递放丰巢快递柜") == "丰巢快递柜"
    assert dropoff_place("机主在开会") == ""
