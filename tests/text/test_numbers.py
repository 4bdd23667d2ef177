from voice.text.numbers import amounts, arabic, read_out_numbers


def test_numerals_are_arabic_and_a_weekday_has_one_name():
    assert arabic("尾号三八六，二十八块") == "尾号386，28块"
    assert arabic("他下礼拜三回来") == arabic("他下星期三回来") == arabic("他下周三回来") == "他下周3回来"
    assert arabic("星期天") == arabic("礼拜日") == "周日"
    assert arabic("礼拜堂") == "礼拜堂"  # not a weekday


def test_numbers_read_out_digit_by_digit_are_found_but_amounts_and_times_are_not():
    assert read_out_numbers("验证码是四八三九二七，卡号6222 0212 3456") == ["483927", "622202123456"]
    assert read_out_numbers("驗證碼：幺二三四") == ["1234"]
    assert read_out_numbers("4-8-3-9") == ["4839"]
    found = read_out_numbers("二十八块，五万元，尾号三八六，10:30")
    assert max(map(len, found)) == 3  # 386; amounts, times and punctuation split the rest


def test_numbers_read_out_in_groups_or_as_numerals_are_one_number():
    assert read_out_numbers("三八二，九一六") == ["382916"]  # two groups of a code: one number
    assert read_out_numbers("验证码是幺两三、四五六") == ["123456"]
    assert read_out_numbers("一下，一会儿，一起") == ["1", "1", "1"]  # lone digits are not joined
    assert read_out_numbers("他一个月大概挣一万出头") == []  # amounts are not read out
    assert read_out_numbers("三点半，到了") == []
    assert read_out_numbers("尾号三八六，10点") == ["386"]


def test_sums_of_money_are_found_exact_or_rough():
    text = "他一年大概三十来万吧，一个月一万出头，奖金十几万，补贴8k，五千块左右"
    said = [words for _, words in amounts(text)]
    assert said == ["三十来万", "一万出头", "十几万", "8k", "五千块左右"]
    assert amounts("五万元") == [(0, "五万元")]
    assert amounts("三点半到，十分钟，两个人") == []  # times and counts are not money
    assert amounts("千万别放驿站") == [] and amounts("一千万") == [(0, "一千万")]  # 千万: "by all means"
