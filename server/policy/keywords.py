"""What the rule-based policy listens for: text normalisation and its keyword tables, in one place.

``server.policy.rules`` decides what to say; this module only says what words mean.  Keeping the vocabulary
apart lets it be read and extended as data (a new courier brand, a new scam phrase) without touching the reply
logic, and lets one keyword list serve every rule that needs it instead of being written out again.

Every table matches ``plain()`` text: NFKC, simplified script, lower case, letters and digits only, so the
keywords need no punctuation, spaces or traditional variants.  Like the policy, it is pure Python.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Final

# Traditional → simplified for the characters the rules look at (ASR may emit traditional script).
# Generated once from OpenCC's TSCharacters table, restricted to the policy's vocabulary, so the policy
# needs no dictionary files at run time.
_T2S: Final = str.maketrans(
    "丟乾來係個們倖傢傳儘優兒別動務匯區員問單嗎噹嚴圓團報奬婦媽實審專對導師帶幫幹幾彆彙復徵愛戶掛擾時會朮東査條棟業榦樓樣機檢檯櫃氣沒況滙滿煩燒獎現異當發盡監確碼箇簽籤糰約給經綫網緊線緝總繫聯職聽臺處號術衕"
    "衛裏裡複見親覺觀訂記訴診証評話誒說説誰課請講謝證議護讓讚豐財貴貸費貼賠賣賬贊趕車輸轉辦迴這進運過達遞還郵醫銀銷錢鏡鐵門開間閤閱閲闆關險電韻項順領題額颱飛餓餵馬騎驗驛體髮麪麫麵麼麽點齣",
    "丢干来系个们幸家传尽优儿别动务汇区员问单吗当严圆团报奖妇妈实审专对导师带帮干几别汇复征爱户挂扰时会术东查条栋业干楼样机检台柜气没况汇满烦烧奖现异当发尽监确码个签签团约给经线网紧线缉总系联职听台处号术同"
    "卫里里复见亲觉观订记诉诊证评话诶说说谁课请讲谢证议护让赞丰财贵贷费贴赔卖账赞赶车输转办回这进运过达递还邮医银销钱镜铁门开间合阅阅板关险电韵项顺领题额台飞饿喂马骑验驿体发面面面么么点出",
)

CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_NOT_WORD = re.compile(r"[^\w]|_")


def normalise(text: str) -> str:
    """ASR text in comparable form: NFKC (full-width → half-width), simplified script, no spaces, lower."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text).translate(_T2S)).lower()


def plain(text: str) -> str:
    """Only letters and digits (CJK included): what the keyword rules match against."""
    return _NOT_WORD.sub("", normalise(text))


def _any_word(*words: str) -> re.Pattern[str]:
    """A pattern for any of ``words`` (plain text); where two start at the same place the earlier one wins."""
    return re.compile("|".join(map(re.escape, words)))


def _mentions(text: str, words: Iterable[str]) -> bool:
    return any(w in text for w in words)


# --- who is calling --------------------------------------------------------------------------------------
SCENARIO_WORDS: Final[Mapping[str, tuple[str, ...]]] = {
    "takeout": ("外卖", "骑手", "美团", "饿了么", "送餐", "取餐", "出餐", "你的餐", "餐到了", "外卖柜"),
    "delivery": ("快递", "包裹", "驿站", "丰巢", "快递柜", "顺丰", "中通", "圆通", "韵达", "申通", "邮政",
                 "京东物流", "到付", "取件", "签收", "寄件"),
    "taxi": ("司机", "打车", "滴滴", "上车", "车牌", "网约车", "快车", "专车", "出租车", "尾号", "接单",
             "等车", "停车", "导航", "行程"),
    "work": ("会议", "开会", "项目", "方案", "老板", "同事", "客户", "报销", "合同", "领导", "经理", "公司",
             "评审", "汇报", "财务", "人事", "工作", "总监", "主管", "上线", "加班"),
}  # fmt: skip
# Harassment, most specific first: each entry's reply declines without saying anything about the owner.
HARASSMENT: Final[tuple[tuple[tuple[str, ...], str], ...]] = (
    (("公安", "派出所", "警官", "法院", "检察院", "涉嫌", "洗钱", "通缉", "传票"),
     "电话里不提供任何信息，如有公务请通过官方渠道联系，再见。"),
    (("验证码", "银行卡", "卡号", "密码", "安全账户", "身份证"), "抱歉，个人信息和验证码都不能提供，再见。"),
    (("中奖", "抽中", "奖金", "领奖", "幸运用户"), "谢谢，机主不需要，也不会交任何费用，再见。"),
    (("客服", "理赔", "订单异常", "账户异常"), "有问题机主会通过官方渠道处理，电话里不办理，再见。"),
    (("贷款", "额度", "保险", "理财", "股票", "推销", "办卡", "信用卡", "征信", "刷单", "兼职", "优惠活动"),
     "谢谢，机主不需要，请不要再打来了，再见。"),
)  # fmt: skip


def harassment_reply(p: str) -> str | None:
    """The decline for the first harassment pattern the caller's words match, or None."""
    return next((reply for words, reply in HARASSMENT if _mentions(p, words)), None)


def scenarios_in(text: str) -> frozenset[str]:
    """Every scenario (harassment aside) that at least one word of ``text`` points to."""
    return frozenset(s for s, words in SCENARIO_WORDS.items() if _mentions(text, words))


def infer_scenario(text: str) -> str | None:
    """The scenario a caller's words point to (harassment wins), or None when nothing matches."""
    p = plain(text)
    if harassment_reply(p) is not None:
        return "harassment"
    hits = {s: sum(w in p for w in words) for s, words in SCENARIO_WORDS.items()}
    best = max(hits, key=lambda s: hits[s])
    return best if hits[best] else None


# --- what a caller's turn says or asks -------------------------------------------------------------------
_CALLBACK_ASK = ("回电", "回个电话", "回个话", "回我", "联系我")  # a message for the owner, or a question
_LIVES_WHERE = ("住哪", "住在哪")  # an address question, and a private one

# 在见 closing a turn: Whisper base often hears a final 再见 on its own as 在见 / 再见证 / 再见者
GOODBYE = re.compile(
    r"再见|在见[证者]?$|拜拜|挂了|先挂|挂啦|不打扰了|就这样(?:吧|了|啊)?$|先这样|没别的事|没事了|走了啊|我走了|先走了"
)
NO_HANGUP = _any_word("别挂", "不要挂", "先别挂")
SORRY = _any_word("不好意思", "打扰", "查一下", "再查", "抱歉", "对不起", "打错")
DOUBT = _any_word("确定", "不会吧", "没错吧", "真的", "不对吧", "怎么会", "名片上")
THANKS = _any_word("谢", "辛苦", "麻烦你了", "麻烦了")
# A turn made only of these is an acknowledgement.  They are stripped with ``sub``, so a token must come
# before any shorter one it starts with (辛苦了 before 辛苦: 了 alone is not a token).
ACK_TOKENS = _any_word(
    "好的", "好嘞", "好滴", "行吧", "没问题", "知道了", "明白了", "明白", "了解", "可以", "谢谢你", "谢谢您",
    "谢谢", "谢了", "辛苦了", "辛苦", "麻烦你了", "麻烦了", "那就", "好", "行", "嗯", "那", "啊", "哈", "吧",
    "呀", "哦", "噢", "ok",
)  # fmt: skip
FILLER = re.compile(r"[嗯啊呃哦噢唔额哎诶欸喔呢]+")
HELLO = re.compile(r"(喂|你好|您好|在吗|hello|hi)+")
HALLUCINATION = _any_word("字幕", "订阅", "点赞", "谢谢观看", "谢谢收看", "明镜", "amara")
MESSAGE = _any_word("让他", "叫他", "跟他说", "告诉他", "转告", "提醒他", "带个话", *_CALLBACK_ASK)

IN_PERSON = _any_word(
    "当面", "本人签", "签字", "签收", "下来拿", "下楼拿", "下来取", "出来拿", "出来取", "开门", "开个门",
    "送上楼", "送上去", "亲手", "你下来",
)  # fmt: skip
REJECT_PLACE = _any_word("不能放", "放不了", "不让放", "没法放", "不好放", "关门了", "满了", "贵重")
SPEAK_NOW = _any_word(
    "接电话", "让他接", "叫他接", "本人接", "找他本人", "马上接", "让他上线", "上线一下", "进会", "打过来",
    "亲自",
)  # fmt: skip
HURRY = _any_word("不能停", "没法停", "停不了", "贴条", "取消", "不等了", "等不了", "太久", "快点", "催")
PROPOSAL = re.compile(
    r"放(?:在|到)?(.{1,6}?(?:里|那儿|那里)?)(?:行不行|可以吗|行吗|好吗|可不可以|成不成|成吗)"
)
ACTION = re.compile(
    r"(?:我|那我|给你|帮你)(?:先|就)?(?:放|交给)|放好了|放了|已经放|放丰巢了|放驿站了|拍个?照"
)
ADDRESS = _any_word("哪户", "几号楼", "门牌", "哪栋", "几单元", "几楼", "地址", *_LIVES_WHERE)
PRIVATE = _any_word(
    "手机号", "电话号码", "号码多少", "身份证", "住址", *_LIVES_WHERE, "家在哪", "在哪上班", "单位在哪"
)
WHERE = _any_word(
    "放哪", "放在哪", "放什么地方", "怎么放", "有人在家", "家里有人", "在家吗", "有人吗", "你在哪", "人在哪",
    "在哪儿", "哪个门", "哪个口", "位置",
)  # fmt: skip
ARRIVAL = _any_word(
    "到了", "到楼下", "到门口", "到你家", "到小区", "快到", "马上到", "送到", "在楼下", "到上车点",
    "到你楼下", "到医院",
)  # fmt: skip
FIND = _any_word("找一下他", "找他", "找机主", "他在吗", "他在不在", "叫他听", "让他听")
PAYMENT = _any_word("到付", "付钱", "给钱", "付款", "运费", "多少钱", "加钱", "等候费")
LOST = _any_word("落在", "落我", "忘在", "丢在", "落下")
CALLBACK = _any_word(*_CALLBACK_ASK, "回复我", "给我打", "打给我")
URGENT = _any_word("急", "尽快", "赶紧", "马上", "严重", "紧急", "要紧")
NOT_URGENT = _any_word("不急", "不着急", "不用急", "别急")
WHEN = _any_word(
    "什么时候", "几点", "多久", "啥时候", "有没有空", "有空吗", "回来", "来不来", "去不去", "能不能来"
)
STATUS = _any_word("怎么样", "情况", "在干嘛", "在忙什么", "在忙吗", "方便吗")
WHO = _any_word("你是谁", "你是哪位", "机器人", "是本人吗", "是他本人", "是机主吗", "你是他")

# --- what a clause of the owner's preset is about -------------------------------------------------------
SITUATION = re.compile(
    r"^我(?:正|现在|今天|这会儿|目前|人)?在|^我(?:要|得|赶)|开会|医院|急诊|陪护|高铁|飞机|出差|加班|上班|开车"
    r"|输液|手术|检查|睡觉|上课|见客户|发烧|收拾"
)
DROPOFF = _any_word("放", "交给", "门口", "门卫", "保安", "驿站", "快递柜", "丰巢", "外卖柜", "前台", "物业")
CHANNEL = _any_word("发短信", "发微信", "留言", "发消息")
CALLBACK_CLAUSE = _any_word("回电", "回复", "回电话", "回来处理", "再打")
