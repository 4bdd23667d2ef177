from voice.metrics.scoring.mentions import code_clash, colour_clash, new_person, new_topic


def test_a_colour_or_a_plate_said_otherwise_than_the_caller_said_it_is_misheard():
    caller = "我是白色的车，车牌尾号K27，你跟她说一下。"
    assert colour_clash("好的，黑色的车，我告诉她。", caller) is not None
    assert colour_clash("好的，白色车，我告诉她。", caller) is None
    assert colour_clash("好的，我告诉她。", caller) is None
    assert colour_clash("红色羽绒服。", "好的。") is None  # no colour in the call to clash with
    assert code_clash("尾号27K，我告诉她。", caller) == "27K where the call said K27"
    assert code_clash("尾号K27，我告诉她。", caller) is None and code_clash("T2到达层", caller) is None


def test_a_person_whose_surname_the_call_never_said_is_someone_else():
    known = "工作上的事全部找李芳（李姐）"
    assert new_person("您就找张姐商量吧。", known) == "张姐"
    assert new_person("您找李姐就行。", known) is None
    assert new_person("大姐您好，谢谢姐。", known) is None  # no one's name
    assert new_person("小刘您好。", "我是小刘") is None


def test_a_matter_nobody_raised_is_the_caller_read_otherwise():
    assert new_topic("车费的话机主已经付过了。", "我在车上捡到一个文件夹") == "车费"
    assert new_topic("车费我转告他。", "师傅说车费多收了") is None
    assert new_topic("好的，文件夹我转告他。", "我在车上捡到一个文件夹") is None
