"""Mandarin text normalization (written -> spoken) that keeps track of offsets.

:func:`tokenize` cuts a zh span into :class:`Piece` objects (Han text, a read-out number
expression, punctuation, a Latin letter run, a symbol, an unreadable character), each with its
offsets in the input, so that the frontend can build :class:`~mixvox.ir.Word` objects pointing
back into the user's text. :func:`normalize_zh` is the string-only view of the same thing.

How it stays fast and safe: the scanner walks the text once; number rules are anchored regexes
tried only where a digit (or a sign/currency sign before a digit) starts, and a digit run longer
than :data:`_MAX_RULE_DIGITS` skips the rules entirely and is read digit by digit, so a
10,000-digit number costs linear time. No pattern nests unbounded quantifiers.

Reading conventions are documented in ``CONVENTIONS.md`` next to this file.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from importlib import resources

from mixvox.frontends import chem
from mixvox.frontends.zh.numbers import read_cardinal, read_digits, read_number
from mixvox.langid import EN_FUNCTION
from mixvox.segment import ARCH_NAME
from mixvox.segment import UNITS as _SEGMENT_UNITS
from mixvox.textutil import fold_width, is_emoji, is_han, is_latin_letter, script_of

#: Letter-2-letter codes whose 2 is the number, not "to" (B2B, P2P, O2O say "to").
_TWO_CODES = frozenset(("Y2K",))

#: Digit runs longer than this never enter the regex rules (read digit by digit).
_MAX_RULE_DIGITS = 32


@dataclass(slots=True)
class Piece:
    """A slice ``[start, end)`` of the (local) text and what is said for it.

    ``kind``: ``han`` (Han text, spoken = itself, segmented and read by the G2P), ``num`` (a
    normalized expression; ``spoken`` is Chinese), ``latin`` (letters read one by one),
    ``punct``, ``skip`` (unreadable; ``issue`` says why), ``space``.
    """

    start: int
    end: int
    kind: str
    spoken: str
    issue: tuple[str, str] | None = None
    #: Offsets of invisible format characters inside the piece (``12\u202e34``): read
    #: through, each reported by the frontend (``format-char``).
    hidden: tuple[int, ...] = ()


# ---------------------------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------------------------

#: Traditional forms of the characters the number rules look at (measure words, 號 萬 億 點 …),
#: so that context decides the same in traditional text (2個 -> 两個); one for one, and only
#: for the rules: Han text itself is spoken as written (the frontend converts it for the G2P).
_TRAD_CONTEXT = str.maketrans(
    "個張條輛號萬億點屆歲臺隻雙對塊兩週間場層棟門頁項組顆盤筆檔節時鐘種噸釐幣區線樓單級輪機餘來幾約"
    "攝電話碼賬戶編證辦發備報歐韓鈔億倆屆處款際劃賽屆價",
    "个张条辆号万亿点届岁台只双对块两周间场层栋门页项组颗盘笔档节时钟种吨厘币区线楼单级轮机余来几约"
    "摄电话码账户编证办发备报欧韩钞亿俩届处款际划赛届价",
)
#: Measure words and units after which a bare ``2`` is read 两 (``2个`` -> 两个).
_LIANG_NEXT = set(
    "个位只条本张件次天种台辆座家名人块元斤米倍把支双对份杯瓶碗篇部首项套批场遍趟回下步点所间"
    "句段页列组颗粒片根棵架艘匹头口群周岁亿万千百桶盒包袋箱节门期届轮层栋户克吨角毛"
    "核路卡帧行夜晚处款道笔例档局盘集枚番圈亩升成拳脚刀眼声顿封幅串排盆锅壶罐扇面堵室厅卫房"
    "勺匙滴碟撮瓣册"
)
#: Words after a code's number that make it a flight or train number, said digit by digit
#: even when short and spaced (``AA 128航班``, ``MU 583次航班``).
#: Words near ``N95``/``P99`` that make it a respirator class (digit by digit), no chip.
_MASK_WORDS = ("口罩", "面罩", "防护", "防尘", "呼吸", "戴", "医用", "过滤", "防疫", "雾霾", "颗粒")
#: The letters of Chinese train classes (G 高铁, D 动车, C 城际, Z 直达, T 特快, K 快速 …).
_TRAIN_LETTERS = frozenset("GDCZTKYLS")
_FLIGHT_AFTER = ("航班", "次航班", "号航班", "次列车", "次高铁", "次动车")
#: Words before a two-letter airline code that make its number a flight (``航班UA 858``).
_FLIGHT_BEFORE = ("航班", "航班号", "乘坐", "搭乘", "转机")
#: How a spoken amount of money ends (a price before ``/1M tokens``, ``/year``).
_PRICE_ENDINGS = ("元", "美元", "欧元", "英镑", "港元")
#: Words of 折 that are no discount after a number (``15折合``, ``30折返``).
_ZHE_VERBS = tuple("折合 折算 折叠 折旧 折返 折射 折腾 折断 折成 折为 折线".split())
#: Measure words that take a size in front (``2大碗`` -> 两大碗, ``2小勺`` -> 两小勺).
_LIANG_SIZED = frozenset("碗勺杯块盘瓶袋箱包盒碟把片张桶壶匙串根瓣颗粒口步堆捆车")
#: Nouns that begin with a measure character: after a product code they are what the code
#: names (``RTX 4090笔记本``, ``Xeon 6348处理器``), not a count (``CPU 3000 元``, ``GPU 2 张``).
_MEASURE_LED_NOUNS = (
    "处理器", "笔记本", "台式机", "台式电脑", "路由器", "卡顿", "套装", "套件", "核显", "核心",
    "头显", "面板", "系列", "版本", "机型", "型号", "芯片", "显卡", "主板",
)  # fmt: skip
#: Letter units after which a bare ``2`` is 两 too (``2GB`` -> 两 G B, ``2K`` -> 两 K).
_LIANG_LETTER_UNITS = frozenset(
    "B KB MB GB TB PB K k M G T W kW V A mA ms s min h km m cm mm kg g mg t L l ml mL kV MW GW "
    "kWh MWh GWh Pa kPa MPa".split()
)
#: After ``2``: an ordinal or a mathematical degree, 二 even before a measure word.
_ER_NOT_LIANG = ("年级", "次方程", "次函数", "次曲线", "次元", "次根", "次型", "次方")
_LIANG_NEXT_WORDS = ("小时", "分钟", "公里", "公斤", "千米", "千克", "星期", "礼拜", "年", "秒钟")
#: Words that begin with a measure character but are no measure (首发 "launch", 周边
#: "merchandise"): after a product name's number (``Switch 2首发价``, ``Switch 2周边``) the number
#: is the name's generation, 二, never the count 两 (``Taylor Swift 2首歌`` keeps 两首).
_NAME_NUMBER_NEXT = (
    "首发", "首款", "首日", "首周", "首月", "首批", "首销", "首映", "首播", "首秀", "首次", "首测",
    "首曝", "首度", "首战", "首更", "周边", "周年", "卡带", "台版", "面板", "场景", "次世代",
)  # fmt: skip

#: Characters that make a following/preceding number a quantity (not an identifier).
_QUANTITY_NEXT = _LIANG_NEXT | set("年月日号秒分多余来几万亿兆度级楼号倍元美欧英韩日港澳台")

#: Words before a number that make it an identifier read digit by digit (with 幺).
_ID_CUES = (
    "号码", "电话", "手机", "尾号", "拨打", "致电", "热线", "编号", "账号", "帐号", "卡号", "单号",
    "工号", "学号", "房间", "房号", "端口", "端口号", "port", "邮编", "密码", "验证码", "代码", "车次", "航班", "型号",
    "批号", "证号", "打", "拨", "QQ", "ID", "微信", "号", "状态码", "ICP备", "备案号", "许可证号", "返回码", "错误码", "编码", "邮政编码", "文号", "合同号", "订单号",
)  # fmt: skip

#: Verbs between an identifier word and its number (端口改成8443, 密码设置为123456).
_LINK_VERBS = tuple(
    sorted(
        "改成 改为 设为 设成 设置为 设置成 设置 换成 换为 变成 变为 填 填写 填写为 输入 写成 写为 "
        "是 为 用 填成 配置为 配置成 指定为".split(),
        key=len,
        reverse=True,
    )
)
#: The cues of two or more characters (打/拨/号 alone are too common before ranges: 打3-5折).
_ID_CUES_WORDS = tuple(c for c in _ID_CUES if len(c) > 1)

_DASH_SCORE_BEFORE = ("比分", "比分是", "比分为", "战胜", "击败", "打成", "总比分", "大比分")
#: Verbs of winning or losing after ``以 X-Y`` / ``以 X:Y`` that make the pair a score.
_SPORT_VERBS = (
    "取胜", "获胜", "胜出", "击败", "战胜", "横扫", "告负", "落败", "逆转", "拿下", "先下一城",
    "力克", "险胜", "完胜", "惜败", "零封", "淘汰", "晋级", "夺冠", "战平", "扳平", "领先", "落后",
    "胜", "负", "赢", "输",
)  # fmt: skip
#: Words shortly before a dash between two numbers that make it a score (比).
_DASH_SCORE_CONTEXT = (
    "比赛", "比分", "半场", "全场", "主场", "客场", "决赛", "半决赛", "小组赛", "联赛", "战报",
    "球赛", "终场", "加时",
)  # fmt: skip
#: After a dash between numbers: words of a range (之间, 左右 …), never a score.
_RANGE_AFTER_WORDS = ("之间", "左右", "以内", "以上", "以下", "之内", "不等", "范围", "区间", "之")
#: A character right after two dashed numbers that makes them a range of things (``1-3班``).
_RANGE_NEXT_CHARS = frozenset(
    "班届栋栏组排列行类期区段站题章节课话集版项条款篇首页室楼座号轮局场盘周季"
)
#: A character right before two dashed numbers that makes them a range or an amount.
_RANGE_BEFORE_CHARS = frozenset(
    "第约近共在从为是到有需要达至于价售卖花值龄高宽长重大小计余升降涨跌增减占每各控调设选用"
)
_DASH_SCORE_AFTER = (
    "获胜", "取胜", "战胜", "击败", "告负", "落败", "胜出", "赢", "输", "胜", "负", "战平",
)  # fmt: skip
#: After a 3-4 digit number: a room number, read digit by digit (302会议室 三零二).
#: Latin words of progress before ``3/10`` (a count out of its total, 三，共十).
_PROGRESS_WORDS = frozenset(
    "epoch epochs step steps iter iters iteration iterations batch round episode ep page part "
    "stage trial lap".split()
)
#: Words before ``28/32GB``, ``3/5个``: an amount used or done out of a total (二十八，共三十二GB).
_USED_CUES = (
    "用了", "已用", "占用", "使用了", "已使用", "完成了", "已完成", "上了", "看了", "读了", "做了",
    "下载了", "已下载", "上传了", "已上传", "答对了", "通过了",
)  # fmt: skip
#: Measure words after ``第3/10``: said after both numbers (第三集，共十集).
_PROGRESS_MEASURES = frozenset("集话轮步章页节期季部题局场回课关层级次篇卷段名个位")
#: ``2 x RTX 4090``: a count, a multiplication sign and a product name starting with a capital
#: (``x``/``×`` glued or spaced; ``X``/``*`` spaced on both sides).
_RE_COUNT_TIMES = re.compile(r" ?([x×]) ?(?=[A-Z])| ([X*]) (?=[A-Z])", re.ASCII)


@lru_cache(maxsize=1)
def _counted_products() -> tuple[tuple[re.Pattern[str], str], ...]:
    """``data/counted_products.tsv``: product-name patterns and their measure words."""
    rows: list[tuple[re.Pattern[str], str]] = []
    path = resources.files("mixvox.frontends.zh").joinpath("data").joinpath("counted_products.tsv")
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        pattern, measure = line.split("\t")[:2]
        rows.append((re.compile(pattern + r"(?![a-z])", re.ASCII), measure))
    return tuple(rows)


def _product_measure(name: str) -> str | None:
    """The measure word for a counted product (张 for a graphics card, 颗 for a processor, 块 for
    a drive, 条 for a memory module; 个 for another code-like name: ``USB-C``, ``10GbE``), or
    ``None`` when the name is no product (``2x Faster``: an English word, 倍)."""
    for pattern, measure in _counted_products():
        if pattern.match(name):
            return measure
    word = re.match(r"[A-Za-z][A-Za-z0-9.+-]*", name)
    if word and (
        any(c.isdigit() for c in word.group()) or sum(c.isupper() for c in word.group()) >= 2
    ):
        return "个"
    return None


#: Names whose ``+`` is part of the name (``Mate 70 Pro+``, ``Disney+``, ``Apple TV+``).
_PLUS_NAMES = "Pro|Ultra|Max|Lite|Note|Mini|TV|Disney|Paramount|ESPN|Discovery|AMC|Peacock|Plus"
_ROAD_WORDS = ("国道", "省道", "县道")
_ROOM_NEXT = ("室", "会议室", "房间", "教室", "宿舍", "病房", "号房", "号会议室", "号房间")
#: Words right before ``N-M`` that make it a chapter-numbered figure, table or formula.
_FIGURE_WORDS = (
    "表", "图", "公式", "算式", "附表", "附图", "例题", "示例", "习题", "定理", "引理", "算法",
    "代码清单", "清单",
)  # fmt: skip
#: Numbers used as words in Chinese chat and news (六六六 praise, 九九六 the working hours,
#: 五二零 "I love you", 八八六 bye), said digit by digit unless counted or measured.
#: A number with words after it is slang only before one of them (520那天, not 增加520).
_SLANG_NUMBERS: dict[str, tuple[str, ...]] = {
    "666": (), "6666": (), "996": (), "886": (), "1314": (), "5201314": (),
    "520": ("那天", "当天", "这天", "节", "表白", "快乐", "礼物"),
    "521": ("那天", "当天", "这天", "节", "表白", "快乐", "礼物"),
    "88": ("VIP",),  # 淘宝88VIP: the membership's name, 八八 VIP
    # the mid-year shopping festival, like 双十一 (6·18 with its dot is a date rule)
    "618": ("期间", "大促", "活动", "购物节", "当天", "那天", "狂欢", "促销", "预售", "开门红", "秒杀",
            "囤货", "优惠", "返场", "和双", "前后", "之前", "以后", "之后"),
    "818": ("发烧节", "购物节", "大促", "期间", "活动", "当天"),  # Suning's August festival
}  # fmt: skip
#: Words right before a number of :data:`_SLANG_NUMBERS` that make it the word too
#: (``京东618``, ``今年618你买了什么``, ``双11和618``), when no measure word or unit follows.
_SLANG_BEFORE: dict[str, tuple[str, ...]] = {
    "618": ("京东", "天猫", "淘宝", "拼多多", "今年", "去年", "明年", "双11和", "双十一和", "年中"),
    "818": ("苏宁",),
}  # fmt: skip
#: Words before a number that make it a count or an amount.
_COUNT_BEFORE = (
    "共", "达", "计", "约", "超过", "第", "为", "近", "逾", "余", "合计", "总计", "仅", "增加",
    "减少", "上涨", "下降", "增长", "到", "至", "是", "有",
)  # fmt: skip
#: Superscript digits 0-9, by value (an exponent written 10⁹).
_SUPERSCRIPT_DIGITS = "⁰¹²³⁴⁵⁶⁷⁸⁹"
#: Words around ``M/D`` that make it a date.
_SLASH_DATE_BEFORE = (
    "在",
    "于",
    "从",
    "自",
    "截至",
    "截止",
    "到",
    "至",
    "是",
    "定在",
    "定于",
    "每年",
    "今年",
    "明年",
    "去年",
)
_SLASH_DATE_AFTER = (
    "开始", "起", "前", "后", "那天", "当天", "这天", "截止", "上线", "发布", "举行", "举办", "放假",
    "开学", "生日", "圣诞", "晚上", "上午", "下午", "凌晨", "中午", "早上", "晚",
)  # fmt: skip
#: Words before ``20241115`` that make eight digits a date (生产日期：20241115).
_DATE_WORDS = (
    "日期",
    "生日",
    "出生于",
    "有效期至",
    "有效期",
    "到期日",
    "截止日",
    "发布日",
    "签发日",
)
#: Words after a dotted ``MM.DD`` without a zero (``11.11当天``) that make it a date, not a decimal.
_DOTTED_DATE_AFTER = (
    "当天", "那天", "这天", "当晚", "零点", "期间", "大促", "活动", "购物节", "晚会", "前后", "之前",
    "之后", "开始", "截止", "上线", "发布", "正式", "举行", "举办", "开幕", "开售", "开播", "上映",
    "开业", "圣诞", "元旦", "国庆", "情人节", "劳动节", "儿童节", "教师节", "建军节", "平安夜",
    "春节", "中秋", "端午", "七夕",
)  # fmt: skip
#: Words right before a dotted ``MM.DD`` without a zero (``将于12.20正式发布``) that make it a
#: date: verbs of scheduling, which take no decimal (``增长到12.20`` stays a decimal).
_DOTTED_DATE_BEFORE = (
    "将于", "定于", "定在", "预计于", "计划于", "拟于", "改到", "推迟到", "提前到", "有效期至",
    "有效期到", "截至", "截止到", "截止至",
)  # fmt: skip
#: After a four-digit year that names something (2024届 二零二四届, 2025款, 2024赛季).
_YEAR_NAMED_NEXT = (
    "届",
    "级",
    "款",
    "版",
    "赛季",
    "财年",
    "学年",
    "年度",
    "春晚",
    "高考",
    "考研",
    "世界杯",
    "奥运",
)
#: Han model names before a dash and a number (歼-20, 东风-41): the dash is silent.
_MODEL_PREFIXES = (
    "歼", "运", "轰", "东风", "红旗", "鹰击", "巨浪", "长剑", "霹雳", "枭龙", "空警", "翼龙", "彩虹",
    "武直", "歼轰", "鲲龙",
)  # fmt: skip
#: Words around a bare four-digit 19xx/20xx number (no 年) that make it a year.
_BARE_YEAR_BEFORE = (
    "在", "于", "从", "自", "到", "至", "早在", "截至", "截止", "告别", "迎接", "回顾", "展望", "直到",
)  # fmt: skip
_BARE_YEAR_AFTER = (
    "来了",
    "之前",
    "以前",
    "以后",
    "之后",
    "到",
    "至",
    "开始",
    "结束",
    "过去",
    "快乐",
)
#: Words right before a 5+ digit number that make it an amount (捐了50000给, 突破100000大关).
_AMOUNT_BEFORE = (
    "了", "差", "过", "破", "到", "达", "共", "有", "值", "价", "花", "赚", "捐", "付", "欠", "借",
    "存", "收", "赔", "亏", "省", "卖", "涨", "跌", "增", "减", "约", "近", "超", "余",
)  # fmt: skip
#: After ``<digits>单元`` (an address), a 3-4 digit number is a flat number (2单元501).
_ADDRESS_BEFORE_ROOM = ("单元", "号楼", "栋", "幢", "座", "楼")
#: After 110/119/120/122: the emergency numbers, read 幺幺零.
#: Public service numbers, said digit by digit with 幺 after a call word (打 and 拨 are
#: identifier cues already) or before 报警/急救 …: 有事找110, 叫120, 投诉找12315.
_SERVICE_NUMBERS = ("110", "119", "120", "122", "114", "12315", "12345", "12306", "12369")
_SERVICE_CALL_BEFORE = ("报", "找", "叫", "呼叫", "求助", "联系", "打给", "拨给", "致电")
_EMERGENCY_NEXT = ("报警", "警", "火警", "消防", "急救", "救护", "指挥", "交警", "电话", "求助")
#: After a number that names rather than counts (a house, a bus route, an issue): 二百, not 两百.
_NAMING_NEXT = ("号", "路", "期", "届")
_SCORE_CUES = ("比分", "比赛", "战胜", "击败", "打成", "定格", "赢", "输", "胜", "负", "平", "比")
#: Words after a compared clock time (``比9:00晚``, ``比7:30多睡``): earlier, later, better ….
_COMPARED_NEXT = tuple("早晚快慢好差多少更还") + ("合适", "方便", "划算", "要")
#: A clock time (two-digit minutes, an am/pm or a Chinese day part may follow) right before 比.
_RE_TIME_BEFORE_BI = re.compile(
    r"(?<![\d:：])(?:[01]?\d|2[0-4])[:：][0-5]\d(?: ?[AaPp]\.?[Mm]\.?)? ?比 ?$", re.ASCII
)

#: Units written as one character (㎡, ㎞, ㎏ ...): what they are read as.
_UNIT_CHARS = {
    "㎡": "平方米", "㎢": "平方千米", "㎠": "平方厘米", "㎟": "平方毫米", "㎥": "立方米",
    "㎤": "立方厘米", "㎞": "千米", "㎝": "厘米", "㎜": "毫米", "㎏": "千克", "㎎": "毫克",
    "㎖": "毫升", "㏄": "毫升", "㎘": "千升", "㎾": "千瓦", "㎽": "毫瓦", "㎐": "赫兹",
    "㎑": "千赫兹", "㎒": "兆赫兹", "㎓": "吉赫兹", "㏈": "分贝", "㎧": "米每秒", "㏎": "千米",
}  # fmt: skip
#: Unit symbols after a number: symbol -> reading. Matched longest first, case-sensitive,
#: and only when not followed by another Latin letter.
_UNITS: dict[str, str] = {
    "km²": "平方千米", "km2": "平方千米", "m²": "平方米", "cm²": "平方厘米", "mm²": "平方毫米",
    "m³": "立方米", "cm³": "立方厘米", "km/h": "千米每小时", "m/s": "米每秒",
    "kWh": "千瓦时", "mAh": "毫安时", "kHz": "千赫兹", "MHz": "兆赫兹", "GHz": "吉赫兹",
    "Hz": "赫兹", "kW": "千瓦", "W": "瓦", "V": "伏", "mA": "毫安", "A": "安",
    "ms": "毫秒", "μs": "微秒", "µs": "微秒", "ns": "纳秒", "s": "秒", "min": "分钟", "h": "小时",
    "km": "千米", "m": "米", "cm": "厘米", "mm": "毫米", "nm": "纳米", "μm": "微米", "µm": "微米",
    "kg": "千克", "g": "克", "mg": "毫克", "t": "吨", "L": "升", "l": "升", "ml": "毫升",
    "mL": "毫升", "°C": "摄氏度", "℃": "摄氏度", "°F": "华氏度", "℉": "华氏度", "°": "度",
    "mmol": "毫摩尔", "μmol": "微摩尔", "mol": "摩尔",
    "Gbps": "吉比特每秒", "Mbps": "兆比特每秒", "Kbps": "千比特每秒", "kbps": "千比特每秒",
    "Gb/s": "吉比特每秒", "Mb/s": "兆比特每秒", "Kb/s": "千比特每秒", "kb/s": "千比特每秒",
    "kcal": "千卡", "cal": "卡", "kJ": "千焦", "rpm": "转每分钟", "k㎡": "平方千米",
    "′": "分", "″": "秒",
    "kV": "千伏", "GW": "吉瓦", "MW": "兆瓦", "GWh": "吉瓦时", "MWh": "兆瓦时", "TWh": "太瓦时",
    "Pa": "帕", "kPa": "千帕", "MPa": "兆帕", "GPa": "吉帕", "hPa": "百帕",
    "μg": "微克", "µg": "微克", "ng": "纳克", "lux": "勒克斯", "mph": "英里每小时",
    "ft": "英尺", "lb": "磅", "lbs": "磅", "oz": "盎司",
    "dB": "分贝", "px": "像素", "fps": "帧每秒", "w": "万", "cc": "毫升", "mmHg": "毫米汞柱",
    "dL": "分升", "U/L": "单位每升", "IU/L": "国际单位每升", "IU/mL": "国际单位每毫升",
    "nits": "尼特", "nit": "尼特", "lm": "流明", "Wh": "瓦时", "RPM": "转每分钟", "inch": "英寸",
    "inches": "英寸", "bit": "比特", "bits": "比特", "tsp": "茶匙", "tbsp": "汤匙", "bar": "巴",
    "mbar": "毫巴", "psi": "磅每平方英寸",
}  # fmt: skip
_UNITS.update(_UNIT_CHARS)
# plural and longer time units of chat and logs (大约10 mins后, 30 secs): tnen, session 8
_UNITS.update({"mins": "分钟", "sec": "秒", "secs": "秒", "hr": "小时", "hrs": "小时"})
_UNIT_KEYS = sorted(_UNITS, key=len, reverse=True)
#: Words of body height before ``5'10"``: feet and inches (五英尺十英寸), not a pace.
_HEIGHT_WORDS = ("身高", "个子", "个头", "身长", "净高", "个儿")
#: An ion's token: a formula, then a superscript charge or an ASCII sign (checked by
#: :func:`mixvox.frontends.chem.ion`).
_RE_ION_TOKEN = re.compile(r"[A-Z][A-Za-z0-9()₀₁₂₃₄₅₆₇₈₉]*(?:[⁰¹²³⁴⁵⁶⁷⁸⁹]?[⁺⁻]|[+-])")
#: Chinese names of ions, as chemistry classes say them: ``(body, charge)`` -> the name before
#: 离子 (``charge`` 0: any charge of that body).
_ION_NAMES: dict[tuple[str, int], str] = {
    ("H", 1): "氢", ("H", -1): "氢负", ("Li", 0): "锂", ("Na", 0): "钠", ("K", 0): "钾",
    ("Rb", 0): "铷", ("Cs", 0): "铯", ("Ag", 0): "银", ("Cu", 1): "亚铜", ("Cu", 2): "铜",
    ("Be", 0): "铍", ("Mg", 0): "镁", ("Ca", 0): "钙", ("Sr", 0): "锶", ("Ba", 0): "钡",
    ("Zn", 0): "锌", ("Cd", 0): "镉", ("Hg", 0): "汞", ("Al", 0): "铝", ("Fe", 2): "亚铁",
    ("Fe", 3): "铁", ("Co", 0): "钴", ("Ni", 0): "镍", ("Mn", 0): "锰", ("Cr", 0): "铬",
    ("Pb", 0): "铅", ("Sn", 2): "亚锡", ("Sn", 4): "锡", ("Au", 0): "金", ("Pt", 0): "铂",
    ("F", 0): "氟", ("Cl", 0): "氯", ("Br", 0): "溴", ("I", 0): "碘", ("O", 0): "氧",
    ("S", 0): "硫", ("N", 0): "氮",
    ("OH", 0): "氢氧根", ("NH4", 0): "铵根", ("H3O", 0): "水合氢", ("SO4", 0): "硫酸根",
    ("SO3", 0): "亚硫酸根", ("HSO4", 0): "硫酸氢根", ("HSO3", 0): "亚硫酸氢根",
    ("NO3", 0): "硝酸根", ("NO2", 0): "亚硝酸根", ("CO3", 0): "碳酸根", ("HCO3", 0): "碳酸氢根",
    ("PO4", 0): "磷酸根", ("HPO4", 0): "磷酸氢根", ("H2PO4", 0): "磷酸二氢根",
    ("ClO", 0): "次氯酸根", ("ClO3", 0): "氯酸根", ("ClO4", 0): "高氯酸根",
    ("MnO4", -1): "高锰酸根", ("MnO4", -2): "锰酸根", ("SiO3", 0): "硅酸根",
    ("Cr2O7", 0): "重铬酸根", ("CrO4", 0): "铬酸根", ("AlO2", 0): "偏铝酸根",
    ("S2O3", 0): "硫代硫酸根", ("SCN", 0): "硫氰酸根", ("CN", 0): "氰根", ("C2O4", 0): "草酸根",
    ("CH3COO", 0): "醋酸根",
}  # fmt: skip
#: Words of a sentence about shares (a bracketed six-digit number after a name is its code).
_STOCK_WORDS = ("股", "涨", "跌", "收盘", "开盘", "市值", "板块", "证券", "停牌", "上市", "成交")
#: ``#1234``: an issue, pull-request or ticket number (four digits or more, no # after it).
_RE_HASH_NUMBER = re.compile(r"#(\d{4,})(?![\d#.,A-Za-z])", re.ASCII)
#: ``3.22``: a dotted month and day (a date only with a cue: :meth:`_Scanner._weekday_near`).
_RE_DOTTED_MD = re.compile(r"(\d{1,2})\.(\d{1,2})(?![\d.])", re.ASCII)
#: A sunscreen's ratings: ``SPF50+`` (the + only after the number), ``PA++++``.
_RE_SUN_RATING = re.compile(r"(SPF ?(?=\d)|PA(?=\+))(\d{0,3})(\+{0,4})(?![\w+])", re.ASCII)
#: Roman numerals in capitals that count kinds and stages (II型, III期, SATA III); never one
#: letter: V型领口 and X型腿 are shapes, I型血 a letter.
_ROMAN_VALUES = {
    "II": 2, "III": 3, "IV": 4, "VI": 6, "VII": 7, "VIII": 8, "IX": 9, "XI": 11, "XII": 12,
}  # fmt: skip
_RE_ROMAN = re.compile(r"[IVX]+(?![A-Za-z0-9])", re.ASCII)
#: Words before a spaced Roman numeral that number a sequence (``Mark IV``, ``Part II``).
_ROMAN_SEQUENCE_WORDS = frozenset(
    "mark part episode chapter vol volume gen generation phase type series season act book "
    "stage level round".split()
)
#: Measure words after a Roman numeral that make it a number: a type, a stage, a grade.
_ROMAN_MEASURES = frozenset("型期级类代度号卷章部阶")  # as router.segment
#: Names after a dotted ``M.D`` that make it a day named by its date (3.8妇女节 三八).
_FESTIVAL_AFTER = (
    "妇女节", "劳动节", "儿童节", "建党节", "建军节", "国庆", "青年节", "黄金周", "小长假", "长假",
    "晚会", "消费者权益日", "购物节", "大促",
)  # fmt: skip
#: A weekday written in Chinese, at the end or the start of a stretch of text.
_RE_WEEKDAY_END = re.compile(r"(?:周|星期|礼拜)[一二三四五六日天]$")
_RE_WEEKDAY_START = re.compile(r"(?:周|星期|礼拜)[一二三四五六日天]")
#: A memory type ending right before a speed (``DDR5-6400``, ``LPDDR4-4266``, ``GDDR6``).
_RE_MEMORY_CODE = re.compile(r"(?<![A-Za-z])(?:LP|G)?DDR\d$", re.ASCII)
#: Words before ``K108处`` that make it a road's kilometre post (a cardinal, not a model).
_ROAD_CONTEXT = ("高速", "国道", "省道", "县道", "公路", "路段", "桩号", "线")
#: ``9001:2015``: a standard's number and the year of its edition.
_RE_STANDARD_YEAR = re.compile(r"(\d{3,5})[:：](\d{4})(?![\d:：])", re.ASCII)
#: Words of pay, rent and prices: after them (in the same clause) ``40W`` is 四十万, not 瓦.
_SALARY_WORDS = (
    "年薪", "月薪", "薪资", "薪水", "工资", "收入", "房租", "租金", "月租", "存款", "预算", "身价",
    "年收入", "底薪", "奖金", "税前", "税后", "首付", "房价", "总价", "估值", "融资",
)  # fmt: skip
#: Words after 985/211 that make them China's university programmes (九八五高校).
_UNIVERSITY_NEXT = frozenset(
    ("高校", "大学", "院校", "工程", "学校", "名校", "学生", "毕业", "本科")
)
#: A stock exchange's suffix after a stock code (``600519.SH``, ``00700.HK``).
_RE_EXCHANGE = re.compile(r"\.(?:SH|SZ|SS|BJ|HK|sh|sz|hk)(?![A-Za-z0-9])", re.ASCII)
#: The one-character names of the provinces that start a licence plate (粤B, 京A, 沪A).
_PLATE_PROVINCES = frozenset("京津沪渝冀豫云辽黑湘皖鲁新苏浙赣鄂桂甘晋蒙陕吉闽贵粤青藏川宁琼")
#: What follows a plate's city letter: a separator, then 5 or 6 capitals and digits.
#: (a new-energy plate may put its D/F before the separator: 沪AD·12345).
_RE_PLATE_TAIL = re.compile(r"([A-Z]?)[·・•\- ]?([A-Z0-9]{5,6})(?![A-Za-z0-9])", re.ASCII)
_RE_PLATE_TAIL_ONE = re.compile(r"()[·・•\- ]?([A-Z0-9]{5,6})(?![A-Za-z0-9])", re.ASCII)
_TEMPERATURE_UNITS = ("°C", "℃", "°F", "℉")

_CURRENCY_PREFIX: dict[str, str] = {
    "¥": "元", "￥": "元", "$": "美元", "US$": "美元", "A$": "澳元", "HK$": "港元", "C$": "加元",
    "NT$": "新台币", "€": "欧元", "£": "英镑", "₩": "韩元", "₹": "卢比", "₽": "卢布",
    "CNY": "人民币", "RMB": "人民币", "USD": "美元", "HKD": "港元", "EUR": "欧元", "GBP": "英镑",
    "JPY": "日元", "AUD": "澳元", "KRW": "韩元", "CAD": "加元",
}  # fmt: skip
#: Words shortly before ``EUR 42`` that make it a size of the European system, not euros.
_SIZE_WORDS = ("尺码", "鞋码", "码数", "码子", "鞋号", "尺寸", "鞋子", "的鞋", "双鞋", "穿", "欧码")
_CURRENCY_KEYS = sorted(_CURRENCY_PREFIX, key=len, reverse=True)
#: Words of an address before a building number (``天河路385号太古汇2座``).
_ADDRESS_WORDS = (
    "地址",
    "市",
    "区",
    "路",
    "街",
    "道",
    "号",
    "大厦",
    "广场",
    "小区",
    "花园",
    "园区",
    "中心",
)
#: English words that number a thing (``Round 2``, ``Step 2``): the number is a label, 二 not 两.
_LABEL_WORDS = frozenset(
    "round level part step day season chapter section page figure fig table top episode ep game "
    "phase stage lesson unit week lecture room gate line track vol volume act scene no "
    "grade class module task question problem exercise lab".split()
)
#: English time words after the slash of a price (``$19.99/month``): 每月.
_PER_TIME_WORDS = {
    "month": "月", "mo": "月", "year": "年", "yr": "年", "week": "周", "wk": "周", "day": "天",
    "hour": "小时", "hr": "小时", "h": "小时", "min": "分钟", "minute": "分钟",
}  # fmt: skip
#: Other written names of a currency (``HK$100港币``: the written name says it once).
_CURRENCY_SAME = {"港元": ("港币",), "美元": ("美金",), "人民币": ("元",), "新台币": ("台币",)}
#: A currency code after an amount (``3000 RMB``, ``500USD``).
_RE_CURRENCY_AFTER = re.compile(
    r" ?(CNY|RMB|USD|HKD|EUR|GBP|JPY|AUD|KRW|CAD)(?![A-Za-z])", re.ASCII
)
#: K/M/B between an amount and a currency word (``2.5B美元``, ``300M元``).
_RE_MAGNITUDE_MONEY = re.compile(r"([KMB])(?=美元|元|人民币|欧元|英镑|日元|港元|韩元)")

#: Symbols read as words wherever they stand in a zh span.
_SYMBOLS: dict[str, str] = {
    "<=": "小于等于", ">=": "大于等于", "!=": "不等于", "≤": "小于等于", "≥": "大于等于",
    "==": "等于",  # a==b: the comparison of code, said once (it was 等于等于)
    "<<": "左移", ">>": "右移",
    "≠": "不等于", "≈": "约等于", "+": "加", "=": "等于", "<": "小于", ">": "大于", "×": "乘",
    "÷": "除以", "±": "正负", "%": "百分号", "‰": "千分号", "°": "度", "℃": "摄氏度",
    "&": "和", "@": "艾特", "√": "根号", "∞": "无穷大",
    "¥": "元", "$": "美元", "€": "欧元", "£": "英镑", "§": "第", "№": "号",
    "π": "派", "²": "的平方", "³": "的立方", "∑": "求和", "∫": "积分",
    "∈": "属于", "∉": "不属于", "⊆": "包含于", "⊂": "真包含于", "∩": "交", "∪": "并",
    "∝": "正比于", "∀": "对任意", "∃": "存在", "∵": "因为", "∴": "所以", "≡": "恒等于",
    "≪": "远小于", "≫": "远大于", "‱": "万分号",
}  # fmt: skip
# Greek letters used as symbols (σ, μ, Δ), read as Chinese technical speech says them
_SYMBOLS.update(
    dict(
        zip(
            "αβγδεζηθικλμνξοπρστυφχψωΓΔΘΛΞΠΣΦΨΩ",
            "阿尔法 贝塔 伽马 德尔塔 艾普西隆 泽塔 伊塔 西塔 约塔 卡帕 兰姆达 缪 纽 克西 奥米克戎 派 柔 "
            "西格玛 陶 宇普西隆 斐 希 普西 欧米伽 伽马 德尔塔 西塔 兰姆达 克西 派 西格玛 斐 普西 欧米伽".split(),
            strict=True,
        )
    )
)
# circled numbers ①-⑳ and Roman numeral characters Ⅰ-Ⅻ / ⅰ-ⅻ read as the number they stand for
for _k in range(20):
    _SYMBOLS[chr(0x2460 + _k)] = read_cardinal(str(_k + 1))
for _k in range(12):
    _SYMBOLS[chr(0x2160 + _k)] = _SYMBOLS[chr(0x2170 + _k)] = read_cardinal(str(_k + 1))

#: Words before ``-5度`` that make it a temperature (零下五度), not a signed angle.
_TEMPERATURE_CUES = ("气温", "温度", "低温", "高温", "最低", "最高", "降至", "降到", "室外", "室温",
                     "体感", "零下", "夜间", "白天", "冷")  # fmt: skip

#: Letters after an amount of money: thousand, million, billion (``$2M``, ``$10B``).
_MAGNITUDES = {"K": 3, "k": 3, "M": 6, "B": 9}


def _scaled(num: str, exp: int) -> str:
    """``num`` (digits, one optional dot) times ``10**exp``, as a plain decimal string."""
    ip, _, fp = num.partition(".")
    fp = fp.ljust(exp, "0")
    whole = (ip + fp[:exp]).lstrip("0") or "0"
    rest = fp[exp:].rstrip("0")
    return whole + ("." + rest if rest else "")


#: Words shortly before a 3-digit number that make it an HTTP status code (返回了一个403).
_STATUS_CUES = ("返回", "报错", "报了", "响应", "状态", "错误")
#: Words right after a 3-digit number that make it a status code (页面显示404错误, 404 Not Found).
_STATUS_AFTER = ("错误", "报错", " Not Found", " not found", " error", " Error")

#: After ``<digit>A``: a grade or class (5A级景区), not the unit ampere.
_GRADE_NEXT = ("级", "类", "景区", "游戏", "大作", "广告", "公司", "标准")
#: Nouns after ``N栋`` that make it a count of buildings (``2栋楼``, ``2栋别墅``).
_BUILDING_NOUNS = (
    "楼", "房", "别墅", "大楼", "建筑", "宿舍", "高楼", "高层", "住宅", "厂房", "小楼", "办公楼", "教学楼",
)  # fmt: skip
#: Words shortly before ``<row><letter>`` that make it a seat (座位是12A, 值机选了3A), and the
#: words right after it that do (32A座, 12A靠窗).
_SEAT_BEFORE = (
    "座位", "座号", "坐", "选座", "值机", "换座", "换到", "靠窗", "靠过道", "登机牌", "舱", "位子",
    "车厢", "影厅", "seat", "Seat",
)  # fmt: skip
_SEAT_AFTER = ("座", "号", "靠窗", "靠过道", "的座位", "位置", "这个位", "的位子")
#: A car or row number right before the seat (``07车03A号``, ``1排1A``).
_RE_CAR_OR_ROW = re.compile(r"\d{1,2} ?[车排] ?$")

#: Dashes and tildes that read 到 between two numbers (the em dash of 14:00—16:00 too).
_RANGE_DASHES = ("-", "~", "—", "–", "～", "−")
#: Film speeds (ISO 100 ... ISO 102400) and words that put them in a photograph.
_FILM_SPEEDS = frozenset(
    "50 64 80 100 125 160 200 250 320 400 500 640 800 1000 1250 1600 2000 2500 3200 4000 5000 "
    "6400 8000 10000 12800 25600 51200 102400".split()
)
#: Film speeds of the doubling series from 1600 on: no ISO standard people cite has these
#: numbers, so after ISO they are a sensitivity even with no photo word around.
_FILM_DOUBLINGS = frozenset("1600 3200 6400 12800 25600 51200 102400".split())
#: Words after ``ISO <number>`` that make it a standard.
_STANDARD_NEXT = ("认证", "标准", "体系", "质量", "规范", "合规", "certif", "standard", "compl")
_PHOTO_WORDS = (
    "光圈",
    "快门",
    "感光",
    "曝光",
    "拍",
    "镜头",
    "相机",
    "f/",
    "F/",
    "画质",
    "噪点",
    "夜景",
    "照片",
    "摄影",
    "传感器",
    "画幅",
    "单反",
    "微单",
    "降噪",
    "暗光",
    "弱光",
    "高感",
    "宽容度",
)
#: After ``<number>x``: an operator, so the x is a variable (2x+1), not 倍 (快了2x).
_MATH_NEXT = frozenset("+-−=<>*/^²³)≤≥≈")
#: Words shortly before ``H:MM:SS`` that make it a duration (两小时五分三十秒), not a time.
_DURATION_TIME_CUES = (
    "成绩", "用时", "耗时", "时长", "历时", "跑出", "计时", "完赛", "净时间", "还剩", "剩余",
)  # fmt: skip
#: Characters of a time written in Chinese (3点4分5秒, 5点差4分, 3点半).
_HAN_TIME_CHARS = frozenset("点分秒差半刻整钟")
#: Day-part words that already say what am/pm would (``下午3:30 PM``): the morning ones match
#: am, the others pm. Longest first, as they are matched right before or after the time.
_AM_WORDS = ("早上", "早晨", "清晨", "上午", "凌晨", "今早", "明早", "昨早")
_PM_WORDS = (
    "下午", "中午", "傍晚", "晚上", "夜里", "夜间", "晚间", "深夜", "半夜", "午夜", "今晚", "明晚",
    "昨晚", "当晚", "每晚",
)  # fmt: skip

#: Time units after ``word/`` (``tokens/s``): the rate reads 每秒.
_RATE_UNITS = {
    "s": "秒", "sec": "秒", "ms": "毫秒", "min": "分钟", "h": "小时", "hr": "小时", "d": "天",
    "day": "天",
}  # fmt: skip

#: List bullets at the start of a line: structure, not speech.
_BULLETS = frozenset("-*•·")

#: How digits after a brand are read (``data/brands.tsv``): ``digits``, ``cardinal``, ``decimal``.
BRAND_MODES = ("digits", "cardinal", "decimal", "standard")
#: Modes read digit by digit; ``standard`` (ISO 8601-1, GB/T 7714-2015) also keeps a dash
#: between its numbers silent instead of reading it 到.
_DIGIT_MODES = ("digits", "standard")


@lru_cache(maxsize=1)
def brand_table() -> Mapping[str, str]:
    """``data/brands.tsv``: lower-cased brand -> reading mode of the digits after it."""
    text = (
        resources.files("mixvox.frontends.zh")
        .joinpath("data")
        .joinpath("brands.tsv")
        .read_text("utf-8")
    )
    out: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        brand, _, rest = line.partition("\t")
        mode = rest.partition("\t")[0].strip()
        if mode in BRAND_MODES:
            out[brand.strip().casefold()] = mode
    return out


#: Letter runs right after digits that are units or short codes, not a model-number suffix.
_CODE_SUFFIX_UNITS = frozenset("g k b t d x p G K B T D P M".split())
#: Words after a decimal amount that make it money: trailing zeros of the fraction are not said.
_MONEY_WORDS = (
    "元", "块", "美元", "欧元", "英镑", "日元", "港元", "韩元", "人民币", "澳元", "加元",
)  # fmt: skip
#: A 2-digit number before 年 is a year (八六年) with one of these before or after it ...
_YEAR_BEFORE = (
    "在", "于", "从", "自", "到", "至", "是", "生于", "截至", "截止", "直到", "那", "早在",
)  # fmt: skip
_YEAR_AFTER = (
    "出生", "生人", "毕业", "入学", "入职", "结婚", "底", "初", "末", "年中", "春", "夏", "秋", "冬",
    "版", "款", "届", "级", "月", "上半年", "下半年", "奥运", "世界杯", "以前", "以后",
    "Q1", "Q2", "Q3", "Q4", "H1", "H2", "第一季度", "第二季度", "第三季度", "第四季度", "一季度",
    "二季度", "三季度", "四季度", "全年", "财年",
)  # fmt: skip
#: ... and a duration (三十年) with one of these.
_DURATION_BEFORE = (
    "了", "过", "近", "约", "大约", "将近", "长达", "超过", "满", "第", "几", "每", "多", "有", "用",
    "花", "经过", "历经", "持续", "工作", "干", "整整", "足足", "已经", "差不多", "这", "头",
    "共", "为期", "历时", "时隔", "相隔", "隔了", "至少", "最多", "不到", "仅", "才", "还有",
    "再过", "长达", "达", "已",
)  # fmt: skip
_DURATION_AFTER = ("前", "后", "来", "间", "多", "里", "内", "之", "左右", "以上", "以下", "了",
                   "的时间", "整", "半", "时间", "期间", "中")  # fmt: skip

_ERA = re.compile(r"\s?(a\.d\.|b\.c\.|ad|bc|AD|BC|A\.D\.|B\.C\.)(?![A-Za-z])", re.ASCII)
_AMPM = re.compile(r"\s?(a\.m\.|p\.m\.|am|pm|AM|PM|A\.M\.|P\.M\.)(?![A-Za-z])", re.ASCII)

_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_RE_MOBILE = re.compile(r"(?:\+?86[- ]?)?1[3-9]\d(?:[- ]?\d{4}){2}(?!\d)", re.ASCII)
_RE_LANDLINE = re.compile(
    r"(?:(?:\+86[- ]?0?\d{2,3}|0\d{2,3})[- ](?:\d{7,8}|\d{3,4}[- ]\d{4})|[48]00[- ]?\d{3}[- ]?\d{4})"
    r"(?![\d-])",
    re.ASCII,
)
_RE_AREA_CODE = re.compile(
    r"[(（](0\d{2,3}|[2-9]\d{2})[)）] ?(\d{7,8}|\d{3,4}[- ]\d{4})(?![\d-])", re.ASCII
)  # (010)12345678, and North American (650) 253-0000
_RE_HALF_QUARTER = re.compile(r" ?(?:H[12]|Q[1-4])(?![A-Za-z0-9])", re.ASCII)
_RE_IEEE = re.compile(r"802\.(\d{1,2})(?=[a-zA-Z]|[^\d.]|$)", re.ASCII)
_RE_TZ_OFFSET = re.compile(r"([+-])(\d{1,2})(?::?(\d{2}))?(?![\d:])", re.ASCII)
_RE_DOT_EVENT = re.compile(r"(\d{1,2})[·・•](\d{1,2})(?![\d·・•])", re.ASCII)
_RE_IP = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}(?![\d.])", re.ASCII)
_RE_VERSION = re.compile(r"\d+(?:\.\d+){2,}(?!\d)", re.ASCII)
_RE_YMD = re.compile(r"(\d{4})([-/.·])(\d{1,2})\2(\d{1,2})(?![\d])", re.ASCII)
_RE_KDA = re.compile(r"\d{1,3}([/-])\d{1,3}\1\d{1,3}(?![\d/.-])", re.ASCII)
#: Words before ``12/3/8`` that make it a game score (kills/deaths/assists), not a date.
_KDA_CUES = ("KDA", "K/D/A", "战绩", "KD", "人头")
_RE_YMD2 = re.compile(r"(\d{2})(/)(\d{1,2})/(\d{1,2})(?![\d/])", re.ASCII)
_RE_DMY = re.compile(r"(\d{2})([-/.])(\d{2})\2(\d{4})(?!\d)", re.ASCII)
_RE_YM = re.compile(r"(\d{4})([-/.])(\d{1,2})(?![\d])(?!\2\d)", re.ASCII)
_RE_MY = re.compile(r"(\d{2})([-/.])(\d{4})(?!\d)", re.ASCII)
_RE_DOTTED_MD_RANGE = re.compile(
    r"(\d{1,2})\.(\d{1,2})[-~～—–至到](\d{1,2})\.(\d{1,2})(?![\d.%‰])", re.ASCII
)
#: The reading of a clock time (八点, 十二点三十分, 九点零五分): ends in 点 or 分.
_RE_CLOCK_SPOKEN = re.compile(r"[点分]$")
#: ``2024.1-2026.12``: a range of dotted year.month dates.
_RE_DOTTED_YM_RANGE = re.compile(
    r"(\d{4})\.(\d{1,2})[-~～—–至到](\d{4})\.(\d{1,2})(?![\d.%‰])", re.ASCII
)
#: Words before ``12.1-12.7`` that make it a range of dates, not of decimals.
_DATE_RANGE_CUES = (
    "时间",
    "日期",
    "期间",
    "活动",
    "有效期",
    "档期",
    "假期",
    "展期",
    "会期",
    "工期",
)
_RE_MD = re.compile(r"(\d{2})([-/.])(\d{2})(?![\d])(?!\2\d)", re.ASCII)
#: Digit groups joined by single spaces (``826 5530 9972``), two groups at least.
_RE_SPACED_GROUPS = re.compile(r"\d{2,6}(?: \d{2,6}){1,4}(?![\d.])", re.ASCII)
_RE_SLASH_MD_RANGE = re.compile(
    r"(\d{1,2})/(\d{1,2})[-~～—–至到](\d{1,2})/(\d{1,2})(?![\d/])", re.ASCII
)
_RE_TIME = re.compile(r"(\d{1,2})[:：](\d{2})(?:[:：](\d{2}))?(?![\d:：])", re.ASCII)
#: ``10 : 30``: a time written with spaces around its colon (two-digit minutes).
#: ``'24``: a short year after an apostrophe (no closing quote or more digits after it).
_RE_APOSTROPHE_YEAR = re.compile(r"['’](\d{2})(?![\d'’\"″.])", re.ASCII)
#: ``§3.2``: a section sign and its number.
_RE_SECTION = re.compile(r"§ ?(\d+(?:\.\d+)*)", re.ASCII)
#: ``p.25``, ``pp.10-15``, ``P. 3``: a page abbreviation before its number.
_RE_PAGE = re.compile(r"(pp|p|P|PP)\. ?(?=\d)", re.ASCII)
#: ``（2024）京…``: a year in brackets glued before Chinese (a case or document number).
_RE_BRACKET_YEAR = re.compile(r"[(（](\d{4})[)）]", re.ASCII)
#: ``《1984》``: a title that is only a four-digit number.
_RE_TITLE_YEAR = re.compile(r"《(\d{4})》", re.ASCII)
#: Han characters after a number that are words, not its unit: a dash after them before a
#: digit is a minus sign (``5比-3``, ``降到-10``), not a range (9月1日-9月5日).
_NOT_UNIT_CHARS = frozenset("比到至是为和与或跟及约等降升减加乘除从在于达低高")
#: Words after ``2K`` that make it a resolution class (二K), not two thousand (两K).
_RESOLUTION_NEXT = (
    "屏",
    "分辨率",
    "画质",
    "高清",
    "显示",
    "视频",
    "录制",
    "电视",
    "投影",
    "高刷",
    "超清",
)
#: Words right after ``H:MM`` that make it the clock time of an event, even after 比赛.
_EVENT_START_WORDS = (
    "开始", "开赛", "开球", "开打", "举行", "进行", "出发", "集合", "截止", "结束", "开幕", "入场",
    "检票", "发车", "起飞", "准时",
)  # fmt: skip
#: Words of a match shortly before ``A:B`` glued to a verb of winning (决赛21:19拿下).
_MATCH_WORDS = ("赛", "局", "盘", "场", "队", "主场", "客场", "半场", "全场")
#: After ``A:B``: a word of ratio a few characters on (``1:15的粉水比``, ``1:10的比例``,
#: ``1:3配比``), so the pair is a ratio, never a clock time (比赛, 比较 are no ratio, nor a 比
#: of comparison: ``10:00比9:00好``, ``10:00出发比9:00好``).
_RE_RATIO_AFTER = re.compile(
    r"的?[\u4e00-\u9fff]{0,3}?(?:比例|配比)|的?[\u4e00-\u9fff]{1,3}?比(?![赛较如起上下分\d])"
)
#: ``M:SS.fff`` (``1:29.525``, ``1'29.525``): a lap or race time; never a clock time nor a
#: score.
_RE_LAP_TIME = re.compile(r"([0-9]{1,2})[:：'′]([0-9]{2})\.([0-9]{1,3})(?![0-9.:：\"″])")
_RE_TIME_SPACED = re.compile(r"(\d{1,2}) [:：] (\d{2})()(?![\d:：])", re.ASCII)
#: After ``1:1``: a meeting of two people (一对一), not a scale or a score (一比一).
_ONE_ON_ONE_NEXT = (
    "沟通", "辅导", "交流", "面试", "面谈", "谈话", "教学", "指导", "答疑", "咨询", "服务", "会议",
    "会谈", "培训", "陪练", "私教", "聊", "对话", "对接", "带教", "讲解", "视频", "通话", "约谈",
    "的沟通", "的辅导", "的交流", "的面谈", "的指导", "的答疑", "的会议", "的服务",
    "meeting", "沟通会",
)  # fmt: skip
#: Before ``1:1``: arranging a meeting (约了个1:1, 开个1:1, 来个1:1), so it is one-on-one, 一对一,
#: whatever follows. A bare 约 is also "about" (比例约1:1, 两者约1:1): it counts only with someone
#: met (和/跟/与/找) and no 比 earlier in its clause, and with the clause ending right after the pair.
_ONE_ON_ONE_BEFORE = (
    "约了个", "约了一个", "约个", "约一个", "约了", "开个", "开了个", "开一个", "开了一个", "做个",
    "做了个", "做一个", "来个", "来一个", "来一场", "安排个", "安排了个", "安排一个", "预约", "约一场",
)  # fmt: skip
_RE_RATIO = re.compile(r"(\d+(?:\.\d+)?)(?:[:：]| [:：] )(\d+(?:\.\d+)?)(?![\d:：]|\.\d)", re.ASCII)
_RE_PERCENT_RANGE = re.compile(rf"({_NUM})%?[-~到至]({_NUM})%", re.ASCII)
_RE_PERCENT = re.compile(rf"({_NUM})[%‰‱]", re.ASCII)
_RE_DECIMAL_FRACTION = re.compile(
    r"(\d{1,3}\.\d{1,2}) ?/ ?([1-9]\d{0,2}(?:\.0)?)(?![\d/.:])", re.ASCII
)  # 4.5/5, and a maximum written with .0: GPA 3.8/4.0 (1.2/1.3 are two versions)
_RE_FRACTION = re.compile(r"(\d+) ?/ ?(\d+)(?![\d/])", re.ASCII)
_RE_VERSION_PAIR = re.compile(
    r"(\d{1,3}(?:\.\d{1,3})?)/(\d{1,3}(?:\.\d{1,3})?)(?![\d/]|\.\d)", re.ASCII
)
#: Two or more dotted versions joined by slashes (``1.2/1.3``, ``2.1.0/2.2.0/2.3.0``); an IP
#: address (four parts) never matches, a CIDR's ``/24`` is no version.
_RE_DOTTED_ALTERNATIVES = re.compile(
    r"\d{1,3}(?:\.\d{1,3}){1,2}(?:/\d{1,3}(?:\.\d{1,3}){1,2})+(?![\d/]|\.\d)", re.ASCII
)
#: One field of a cron schedule: ``*``, ``*/5``, ``0``, ``1-5``, ``1,15``, ``0-30/10``.
_CRON_FIELD = r"(?:\*(?:/\d{1,2})?|\d{1,2}(?:-\d{1,2})?(?:/\d{1,2})?(?:,\d{1,2}(?:-\d{1,2})?)*)"
#: Five or six spaced cron fields (``0 2 * * *``, ``*/5 * * * *``), nothing glued after them.
_RE_CRON = re.compile(rf"{_CRON_FIELD}(?: {_CRON_FIELD}){{4,5}}(?![\w*/,.-])", re.ASCII)
#: Lines added and removed, as git and code review tools print them: ``+512/-128``,
#: ``+512 -128``, ``+12 −3``.
_RE_DIFF_STAT = re.compile(
    r"\+(\d{1,3}(?:,\d{3})+|\d{1,7})(?:/| ?/ ?| )[-−](\d{1,3}(?:,\d{3})+|\d{1,7})(?![\d.%/]|,\d)",
    re.ASCII,
)
#: A spreadsheet range (``A1:A10``, ``$B$2:$D$5``, ``AA10:AB20``).
_RE_CELL_RANGE = re.compile(
    r"\$?[A-Z]{1,3}\$?[1-9]\d{0,6}:\$?[A-Z]{1,3}\$?[1-9]\d{0,6}(?![A-Za-z0-9_])", re.ASCII
)
#: A cell reference with its ``$`` marks (``$B$2``, ``$A1`` or ``A$1`` in a range).
_RE_ABSOLUTE_CELL = re.compile(
    r"(?:\$[A-Z]{1,3}\$?[1-9]\d{0,6}|\$?[A-Z]{1,3}\$?[1-9]\d{0,6}:\$?[A-Z]{1,3}\$?[1-9]\d{0,6})"
    r"(?![A-Za-z0-9_])",
    re.ASCII,
)
#: Three or more integers joined by slashes (``70/20/10``, ``1/2/3``).
_RE_SLASH_LIST = re.compile(r"[1-9]\d{0,3}(?:/[1-9]\d{0,3}){2,}(?![\d/.])", re.ASCII)
_RE_RANGE = re.compile(rf"({_NUM})[-~]({_NUM})", re.ASCII)
_RE_NUMBER = re.compile(_NUM, re.ASCII)
_RE_SCI = re.compile(r"(\d+(?:\.\d+)?)[eE]([-+−]?)(\d{1,3})(?![\dA-Za-z])", re.ASCII)
_RE_DIGIT_CHAIN = re.compile(r"\d+(?:-\d+){2,}(?![\d.])", re.ASCII)
_RE_RATIO_CHAIN = re.compile(r"\d+(?:[:：]\d+){2,}(?![\d:：])", re.ASCII)
#: Vulgar fraction characters (½ ⅓ ¼ ¾ ⅛ ...; not ↉ or ⅟, which are no numbers).
_SUBSCRIPT_DIGITS = "₀₁₂₃₄₅₆₇₈₉"
_SUBSCRIPT_TO_ASCII = str.maketrans(_SUBSCRIPT_DIGITS, "0123456789")
_VULGAR_FRACTIONS = frozenset("½⅓⅔¼¾⅕⅖⅗⅘⅙⅚⅐⅛⅜⅝⅞⅑⅒")
_HEX_OR_COLON = frozenset("0123456789abcdefABCDEF:")
_RE_IPV6 = re.compile(r"[0-9A-Fa-f:]{2,39}(?:\.\d{1,3}){0,3}(?![0-9A-Za-z:])", re.ASCII)
_RE_MAC = re.compile(
    r"[0-9A-Fa-f]{2}([:-])[0-9A-Fa-f]{2}(?:\1[0-9A-Fa-f]{2}){4}(?![0-9A-Za-z:-])", re.ASCII
)
_RE_PORT = re.compile(r"[:：](\d{1,5})(?![\d.:])", re.ASCII)
_RE_PER_TIME = re.compile(r"(s|h|min|ms|d)(?![A-Za-z])", re.ASCII)
_ERROR_CODE_CUES = ("错误码", "错误代码", "故障码", "故障代码", "状态码", "报错")
_RE_LAST_DIGITS = re.compile(r"[前后末尾][0-9一二三四五六七八九十]{1,2}位[是为:：]?$")
_RE_HEX_LITERAL = re.compile(r"0[xX]([0-9a-fA-F]{1,16})(?![0-9A-Za-z_])", re.ASCII)
_RE_PRIME_PAIR = re.compile(r"'\d{1,2}(?:\.\d+)?(?:\"|'')", re.ASCII)
_RE_TEMP_RANGE_END = re.compile(rf"[~～\-到至/](-?)({_NUM})(°C|℃|°F|℉)", re.ASCII)


def _is_digit(c: str) -> bool:
    """ASCII digits only: other Unicode digits (٣, ²) are not read by these rules."""
    return "0" <= c <= "9"


def _valid_md(m: int, d: int) -> bool:
    return 1 <= m <= 12 and 1 <= d <= 31


def _ampm_hour(prefix: str, h: int) -> str:
    """The day part and the hour, as Mandarin speakers divide the day: ``12 PM`` is noon
    (中午十二点), ``12 AM`` midnight (凌晨零点, the hour that starts the day, as a 24-hour clock
    says it), 1-5 AM 凌晨 (凌晨三点: nobody says 上午三点), 7-11 PM 晚上 (晚上八点, not 下午八点;
    6 PM stays 下午六点, the end of a working day); otherwise 上午/下午 + the hour. WeText says
    上午 for 1 AM (``1:02:36am``): a documented difference (CONVENTIONS.md)."""
    if h == 12 and prefix == "下午":
        return "中午十二"
    if h == 12 and prefix == "上午":
        return "凌晨零"
    if prefix == "上午" and 1 <= h <= 5:
        prefix = "凌晨"
    elif prefix == "下午" and 7 <= h <= 11:
        prefix = "晚上"
    return prefix + read_cardinal(str(h), liang=True)


def _read_port(raw: str, yao: bool = True) -> str:
    """A port number: one or two digits are said as a number (``22``, ``80`` -> 二十二, 八十,
    as engineers say 八十端口), longer ones digit by digit (``8080``, ``443``)."""
    if len(raw) <= 2 and raw[:1] != "0":
        return read_cardinal(raw)
    return read_digits(raw, yao=yao)


def _is_split(parts: list[str], whole: int) -> bool:
    """Numbers that add up to ``whole`` (1 for decimals, 100 for integers): shares of a split
    (``0.8/0.1/0.1``, ``70/20/10``), read 比 as a ratio ``8:1:1`` is."""
    try:
        values = [float(x) for x in parts]
    except ValueError:
        return False
    return all(v > 0 for v in values) and abs(sum(values) - whole) < 1e-9


def _read_version(v: str) -> str:
    """``2.1.0`` -> 二点一点零; ``120.0.6099.109``: a build group of three or more digits is
    said digit by digit."""
    parts = v.split(".")
    spoken = [read_cardinal(parts[0])] + [
        read_digits(p) if len(p) >= 3 else read_cardinal(p) for p in parts[1:]
    ]
    return "点".join(spoken)


def _read_year(y: str) -> str:
    return read_digits(y) + "年"


def _read_month_day(m: str, d: str | None = None) -> str:
    out = read_cardinal(m) + "月"
    if d is not None:
        out += read_cardinal(d) + "日"
    return out


def _read_md_range(m: re.Match[str]) -> str:
    """Two month/day dates (groups 1-4) joined by 到: ``9/1-9/7`` -> 九月一日到九月七日."""
    return _read_month_day(m.group(1), m.group(2)) + "到" + _read_month_day(m.group(3), m.group(4))


class _Scanner:
    """One pass over a zh span: collects :class:`Piece` objects."""

    def __init__(
        self, text: str, brands: Mapping[str, str] | None = None, context: str = ""
    ) -> None:
        self.brands = {**brand_table(), **brands} if brands else brand_table()
        #: text before the span in its sentence (another span's words): context only
        self.context = context
        self.orig = text
        # fold full-width forms, but keep the Chinese comma: "100，200" is two numbers
        self.t = (
            fold_width(text.replace("，", "\ue000"))
            .replace("\ue000", "，")
            .replace("∶", ":")
            .translate(_TRAD_CONTEXT)
        )  # ∶ (U+2236 RATIO) is a colon: 3∶0 -> 三比零; 2個 decides as 2个 (两个)
        self.n = len(text)
        self.pieces: list[Piece] = []
        self._era_end = 0

    # -- context helpers --------------------------------------------------------------------
    def before(self, i: int, k: int = 4) -> str:
        """The ``k`` characters before ``i``, reaching into the text before the span (its
        sentence's other spans: ``会议ID是123 456 7890``, where ``ID`` is an English span)."""
        if i >= k or not self.context:
            return self.t[max(0, i - k) : i]
        return (self.context[-(k - i) :] + self.t[:i])[-k:]

    def after(self, j: int, k: int = 3) -> str:
        return self.t[j : j + k]

    def unit_at(self, j: int) -> tuple[str, int] | None:
        """A unit symbol starting at ``j`` (one optional space before it)."""
        t = self.t
        k = j + 1 if j < self.n and t[j] == " " else j
        height = self._height_mark(j)
        if height is not None:
            return height
        if (
            t.startswith("in", k)
            and not (k + 2 < self.n and is_latin_letter(t[k + 2]))
            and re.search(r"(?:ft|英尺) ?\d{1,2}$", t[max(0, j - 8) : j])
        ):
            return "inch", k + 2  # 5ft10in, 5 ft 10 in: after feet, in is inches
        if k == j and j > 0 and _is_digit(t[j - 1]) and j < self.n and t[j] in "'\"":
            # 5'30", 39°54'27": ASCII marks for ′ and ″ (minutes and seconds of a pace, an
            # angle or a race time), only as a pair, never a lone quote
            if _RE_PRIME_PAIR.match(t, j):
                return "′", j + 1
            if t[j] == '"' or t.startswith("''", j):
                m = k0 = j - 1
                while m > 0 and j - m < 3 and _is_digit(t[m - 1]):
                    m -= 1
                if m > 0 and t[m - 1] in "'′" and k0 - m < 2:
                    return "″", j + (1 if t[j] == '"' else 2)
        if (
            k == j
            and t.startswith("W", j)
            and not (j + 1 < self.n and is_latin_letter(t[j + 1]))
            and any(
                w in re.split(r"[，,。；;！？!?]", self.before(j, 10))[-1] for w in _SALARY_WORDS
            )
        ):
            return "w", j + 1  # 年薪大概40W: 四十万 (a sum in 万 as people type it), not 瓦
        for u in _UNIT_KEYS:
            if t.startswith(u, k):
                end = k + len(u)
                if end < self.n and u[-1].isalpha() and is_latin_letter(t[end]):
                    continue
                if u in ("w", "t", "l", "h", "s", "m", "g", "A") and k != j:
                    per = u in ("g", "m", "l") and t[end : end + 1] == "/"  # 70 g/L
                    per = per or (u == "A" and bool(re.search(r"\d ?V ", t[max(0, j - 10) : j])))
                    if not ((u in ("s", "h", "g", "m") and self._plain_number_before(j)) or per):
                        continue  # a lone letter after a space is no unit, but 超时30 s is 秒
                        # (重量 171 g 克, 距离 3 m 米: after a number that follows Han)
                if u in ("V", "W") and k != j and t[end : end + 1] in ("-", "/", "+"):
                    continue  # 1500 W is 瓦 (a spec sheet's spacing); "5 V-Sync" is no unit
                if u == "A" and t.startswith(_GRADE_NEXT, end):
                    continue  # 5A级景区, 3A游戏: a grade, not amperes
                if u == "A" and k == j and self._seat_at(j, end):
                    continue  # 座位是12A, 选了靠窗的32A座: a seat's letter, not amperes
                if u == "A" and k == j and self._after_course_code(j):
                    continue  # CS 61A, MATH 53A: a course's letter, not amperes
                return u, end
        return None

    def _height_mark(self, j: int) -> tuple[str, int] | None:
        """``身高5'10"``, ``个子6′2″``, ``5'10"的身高``: after a word of body height (or before
        one) the marks after digits are feet and inches (五英尺十英寸), not the minutes and
        seconds of a pace (五分十秒); returns the unit key (``ft``/``inch``) and its end."""
        t = self.t
        if not (0 < j < self.n and _is_digit(t[j - 1]) and t[j] in "'′\"″"):
            return None
        s0 = j - 1
        while s0 > 0 and (_is_digit(t[s0 - 1]) or t[s0 - 1] == "."):
            s0 -= 1
        if t[j] in "'′":
            if t.startswith("''", j):
                return None  # 5'' is an inch mark written as two quotes: handled below
            feet_at, end, key = s0, j + 1, "ft"
        else:
            feet_end = s0 - 1
            if feet_end < 1 or t[feet_end] not in "'′" or not _is_digit(t[feet_end - 1]):
                return None
            feet_at = feet_end - 1
            while feet_at > 0 and _is_digit(t[feet_at - 1]):
                feet_at -= 1
            end, key = j + (2 if t.startswith("''", j) else 1), "inch"
        m = re.match(r"(?:\d{1,2}(?:[\"″]|''))?", t[end:]) if key == "ft" else None
        after = t[end + (m.end() if m else 0) :][:4]
        cue = self.before(feet_at, 6).rstrip(" 是为约有:：")
        if any(w in cue for w in _HEIGHT_WORDS) or (
            cue.endswith("高") and not cue.endswith(("最高", "提高", "升高", "增高"))
        ):
            return key, end
        if after.startswith(("的身高", "身高", "高", "的个子", "的个头")):
            return key, end
        return None

    def _seat_at(self, j: int, end: int) -> bool:
        """The letter from ``j`` to ``end`` ends a seat (``座位是12A``, ``32A座``): one or two
        row digits before it (no decimal point), and a seat word before the row in its
        clause or a seat word right after the letter."""
        t = self.t
        k = j
        while k > 0 and j - k < 3 and _is_digit(t[k - 1]):
            k -= 1
        if not 0 < j - k <= 2 or (
            k > 0 and t[k - 1].isascii() and (t[k - 1].isalnum() or t[k - 1] == ".")
        ):
            return False  # 3.5A, V2A: an amount or a code, no row
        if t.startswith(_SEAT_AFTER, end):
            return True
        clause = re.split(r"[，,。；;！？!?]", self.context[-12:] + self.before(k, 12))[-1]
        return any(w in clause for w in _SEAT_BEFORE) or bool(_RE_CAR_OR_ROW.search(clause))

    def _price_before(self, i: int) -> bool:
        """The piece ending at ``i`` is an amount of money (``$0.15`` 美元, ``12元``)."""
        last = self.pieces[-1] if self.pieces else None
        return (
            last is not None
            and last.end == i
            and last.kind == "num"
            and last.spoken.endswith(_PRICE_ENDINGS)
        )

    def _after_course_code(self, j: int) -> bool:
        """The digits ending at ``j`` follow a word of capitals and one space, with no number
        before it (``CS 61A``; not the spec ``5V 2A``, whose V is a unit)."""
        t = self.t
        s0 = j
        while s0 > 0 and _is_digit(t[s0 - 1]):
            s0 -= 1
        if s0 == j or s0 < 3 or t[s0 - 1] != " " or not t[s0 - 2].isupper():
            return False
        k = s0 - 2
        while k >= 0 and t[k].isascii() and t[k].isupper():
            k -= 1
        return s0 - 2 - k >= 2 and not (k >= 0 and (_is_digit(t[k]) or t[k] in ".-"))

    def _letter_unit_at(self, j: int) -> bool:
        """A unit written in capital letters, read as letters, glued at ``j``: ``MB``,
        ``GB/s``, ``TB`` (the router's units; not a code's suffix like ``Ti``)."""
        k = j
        while k < self.n and k - j < 5 and is_latin_letter(self.t[k]):
            k += 1
        letters = self.t[j:k]
        return 2 <= len(letters) <= 4 and letters[-1] == "B" and letters.lower() in _SEGMENT_UNITS

    def _plain_number_before(self, j: int) -> bool:
        """The number ending at ``j`` stands after Han text or a space after Han, not after a
        Latin word (``超时30 s``, not ``iPhone 6 s``)."""
        t = self.t
        k = j
        while k > 0 and (_is_digit(t[k - 1]) or t[k - 1] == "."):
            k -= 1
        if k == j:
            return False
        if k > 1 and t[k - 1] in "-~～" and _is_digit(t[k - 2]):
            k -= 1  # 需要2~3 h: the upper end of a range, after Han too
            while k > 0 and (_is_digit(t[k - 1]) or t[k - 1] == "."):
                k -= 1
        if k > 0 and t[k - 1] == " ":
            k -= 1
        return k > 0 and is_han(t[k - 1])

    def liang_next(self, j: int) -> bool:
        if j < self.n and self.t[j] == " ":
            j += 1  # "2 个"
        nxt = self.after(j, 2)
        if nxt and is_latin_letter(nxt[0]):
            k = j
            while k < self.n and k - j < 4 and is_latin_letter(self.t[k]):
                k += 1
            if self.t[j:k] in ("B", "H") and self.after(k, 2) in ("铅笔", "铅芯", "笔芯"):
                return False  # 2B铅笔: a pencil's grade, 二B (never 两B)
            if self.t[j:k] == "K" and (
                self.after(k, 3).startswith(_RESOLUTION_NEXT)
                or re.match(r" ?\d{2,3} ?Hz", self.t[k : k + 8])
            ):
                return False  # 2K屏, 2K 165Hz: a resolution class, 二K (as 4K, 8K)
            if self.t[j:k] == "A" and self._seat_at(j, k):
                return False  # 头等舱2A: a seat, 二A (not two amperes, 两A)
            return self.t[j:k] in _LIANG_LETTER_UNITS  # 2GB -> 两 G B, 2K -> 两 K
        if self.after(j, 3).startswith(_ER_NOT_LIANG):
            return False  # 2年级, 2次方程: an ordinal or a degree, not a count
        if self.after(j, 3).startswith(_NAME_NUMBER_NEXT):
            k = j
            while k > 0 and (_is_digit(self.t[k - 1]) or self.t[k - 1] == " "):
                k -= 1
            while k < j and self.t[k] == " ":
                k += 1  # back on the first digit: _brand_before looks over one space itself
            if self._brand_before(k) is not None or self._han_brand_before(k) is not None:
                return False  # Switch 2首发价: the name's generation, 二 (not 两首)
        if nxt[:1] == "分" and nxt != "分之":
            k = j
            while k > 0 and (_is_digit(self.t[k - 1]) or self.t[k - 1] == " "):
                k -= 1
            return not (k > 0 and self.t[k - 1] in "点时")  # 考了2分 两分; 2点2分 二分
        if nxt[:1] in ("大", "小") and self.after(j + 1, 1) in _LIANG_SIZED:
            return True  # 2大碗面 两大碗, 2小勺盐 两小勺 (but 2小组, 2大学: not measures)
        return bool(nxt) and (nxt[0] in _LIANG_NEXT or nxt.startswith(_LIANG_NEXT_WORDS))

    def code_letter_after(self, j: int) -> bool:
        """Digits from ``j`` end in a Latin letter that is no unit (``3D`` of ``7800X3D``)."""
        k = j
        while k < self.n and _is_digit(self.t[k]):
            k += 1
        return k > j and k < self.n and is_latin_letter(self.t[k]) and not self.unit_at(k)

    # -- main loop -------------------------------------------------------------------------
    def run(self) -> list[Piece]:
        t, n = self.t, self.n
        i = 0
        while i < n:
            c = t[i]
            if c in _HEX_OR_COLON and (":" in t[i : i + 6] or t[i + 2 : i + 3] == "-"):
                j = self._hex_address(i)
                if j > i:
                    i = j
                    continue
            if c == "0" and not (i > 0 and (t[i - 1].isascii() and t[i - 1].isalnum())):
                m = _RE_HEX_LITERAL.match(t, i)
                if m:  # 0x80070005, 0xFF: a hexadecimal literal, 零 X then digit by digit
                    self.add(i, i + 1, "num", "零")
                    self.add(i + 1, i + 2, "latin", "X")
                    self._hex_digits(i + 2, m.group(1))
                    i = m.end()
                    continue
            if c == "$" and self._cell_dollar(i):
                # $B$2, $A1:$A10: the marks of an absolute reference are not said (美元)
                self.add(i, i + 1, "punct", "")
                i += 1
                continue
            if (
                c == ":"
                and _RE_CELL_RANGE.match(t, self._cell_start(i))
                and self._cell_start(i) < i
            ):
                # =SUM(A1:A10), B2:D5: a spreadsheet range, A一到A十 (the colon was silent)
                self.add(i, i + 1, "num", "到")
                i += 1
                continue
            if c == ":" and self._column_range(i):
                # =COUNTIF(D:D,"已完成"), Sheet2!A:B: whole columns, D到D (it was D D)
                self.add(i, i + 1, "num", "到")
                i += 1
                continue
            if (c == "*" or "0" <= c <= "9") and self._cron(i):
                i = self._era_end
                continue
            if "0" <= c <= "9" or self._sign_or_currency_starts_number(i):
                j = self.number(i)
                if j > i:
                    i = j
                    continue
            if (
                c == "."
                and 0 < i < n - 1
                and _is_digit(t[i - 1])
                and t[i + 1] in "xX"
                and not (i + 2 < n and (t[i + 2].isascii() and t[i + 2].isalnum()))
            ):
                self.add(i, i + 1, "num", "点")  # TypeScript 5.x, 1.x.x: a version wildcard
                i += 1
                continue
            if c == "." and 0 < i < n - 1 and is_latin_letter(t[i - 1]) and _is_digit(t[i + 1]):
                k = i
                while k > 0 and i - k < 4 and is_latin_letter(t[k - 1]):
                    k -= 1
                caps = t[k:i].isupper() and i - k <= 3 and not (k > 0 and is_latin_letter(t[k - 1]))
                single = not (i + 2 < n and (_is_digit(t[i + 2]) or t[i + 2] == "."))
                if t[k:i] == "ID" and single and not (k > 0 and is_latin_letter(t[k - 1])):
                    self.add(i, i + 1, "punct", "")  # 大众ID.4: the model is said "ID 四"
                    i += 1
                    continue
                if not (i > 1 and is_latin_letter(t[i - 2])) or (caps and single):
                    # M.2, BA.5 (not Node.js 18, XBB.1.5)
                    self.add(i, i + 1, "num", "点")
                    i += 1
                    continue
            if (
                c == "."
                and i + 1 < n
                and is_latin_letter(t[i + 1])
                and not (i > 0 and t[i - 1].isascii() and (t[i - 1].isalnum() or t[i - 1] in "._/"))
            ):
                j = self._latin_end(i + 1)
                self.add(i, j, "latin", t[i:j])  # .NET, .env, .gitignore: the dot is said
                i = j
                continue
            if c == "." and self._leading_dot_decimal(i):
                j = i + 1
                while j < n and _is_digit(t[j]):
                    j += 1
                self.add(i, j, "num", "零点" + read_digits(t[i + 1 : j]))  # .22 -> 零点二二
                i = j
                continue
            if (
                c == "-"
                and (i == 0 or t[i - 1] in " \t" or is_han(t[i - 1]))
                and (
                    (i + 1 < n and is_latin_letter(t[i + 1]))
                    or (t.startswith("--", i) and i + 2 < n and is_latin_letter(t[i + 2]))
                )
                and not (i == 0 and t[i + 1 : i + 2] == " ")
            ):
                k = i + (2 if t.startswith("--", i) else 1)
                j = self._latin_end(k)
                self.add(i, j, "latin", t[i:j])  # -v, --batch-size: a command-line option
                i = j
                continue
            num = _RE_HASH_NUMBER.match(t, i) if c == "#" else None
            if (
                num
                and not (i > 0 and t[i - 1].isascii() and t[i - 1].isalnum())
                # #2024年度总结#: a topic; a # that starts the next number (bug #1234和PR
                # #1235) closes no topic
                and re.search(r"#(?!\d)", t[num.end() : num.end() + 40]) is None
                and not self.liang_next(num.end())
                and self.after(num.end(), 1) not in _QUANTITY_NEXT  # #100天挑战: a count
                and not self.unit_at(num.end())
            ):
                # PR #1234, issue编号是#5678: an issue or ticket number, digit by digit as
                # developers say it (一二三四); the # is silent. #1, #123 stay numbers.
                self.add(i, i + 1, "punct", "")
                self.add(i + 1, num.end(), "num", read_digits(num.group(1)))
                i = num.end()
                continue
            if c == "#" and self._topic_mark(i):
                self.add(i, i + 1, "punct", "")  # #AI改变生活#: the marks of a topic tag
                i += 1
                continue
            if c in "-~～–—" and self._range_after_quantity(i):
                self.add(i, i + 1, "num", "到")  # 9月1日-9月5日, 2019年~2020年
                i += 1
                continue
            if (
                c in "~～"
                and self._digit_after(i + 1)
                and not (i and _is_digit(t[i - 1]))
                and not (i > 1 and t[i - 1] == " " and _is_digit(t[i - 2]))
            ):
                # "~5分钟": about five minutes; after 约/大约 the tilde adds nothing
                about = self.before(i, 3).rstrip(" ").endswith("约")  # 大约 ~30%
                self.add(i, i + 1, "num", "" if about else "约")
                i += 1
                continue
            short = _RE_APOSTROPHE_YEAR.match(t, i) if c in "'’" else None
            if (
                short
                and not (i > 0 and t[i - 1] in "'’")
                and not (i > 0 and _is_digit(t[i - 1]) and not re.search(r"[QH][1-4]$", t[:i]))
                and not re.match(r"[^，,。；;！？!?]*['’]", t[short.end() :])  # '12点见': a quote
            ):
                # '24款, Q3'25: a year with its century left out, digit by digit (二四)
                self.add(i, i + 1, "punct", "")
                self.add(i + 1, short.end(), "num", read_digits(short.group(1)))
                i = short.end()
                continue
            sect = _RE_SECTION.match(t, i) if c == "§" else None
            if sect:
                # §3.2 -> 第三点二节: the section sign says 第 … 节 (节 was lost)
                self.add(i, sect.end(), "num", "第" + read_number(sect.group(1)) + "节")
                i = sect.end()
                continue
            page = _RE_PAGE.match(t, i) if c in "pP" else None
            if page and not (i > 0 and t[i - 1].isascii() and t[i - 1].isalnum()):
                # p.25, pp.10-15: a page; the letters, the dot silent (it was P 点二十五)
                self.add(i, page.end(1), "latin", " ".join(page.group(1).upper()))
                self.add(page.end(1), page.end(), "punct", "")
                i = page.end()
                continue
            year = _RE_BRACKET_YEAR.match(t, i) if c in "(（" else None
            if (
                year
                and 1900 <= int(year.group(1)) <= 2099
                and is_han(self.after(year.end(), 1))
                and self.after(year.end(), 1) not in _QUANTITY_NEXT
                and not self.liang_next(year.end())
            ):  # (已售（2000）件 stays a count)
                # （2024）京0105民初…号: a case number's year in brackets, digit by digit
                self.add(i, i + 1, "punct", self.orig[i])
                self.add(i + 1, year.end(1), "num", read_digits(year.group(1)))
                self.add(year.end(1), year.end(), "punct", self.orig[year.end(1)])
                i = year.end()
                continue
            title = _RE_TITLE_YEAR.match(t, i) if c == "《" else None
            if title and 1000 <= int(title.group(1)) <= 2999:
                # 《1984》, 《2046》: a title that is a year, digit by digit (not 一千九百八十四)
                self.add(i, i + 1, "punct", "《")
                self.add(i + 1, title.end(1), "num", read_digits(title.group(1)))
                i = title.end(1)
                continue
            if (
                c in "x×"
                and i > 0
                and is_han(t[i - 1])
                and (cnt := re.match(r"[x×]([0-9]{1,2})(?![0-9.A-Za-z_/-])", t[i:]))
                and cnt.group(1) not in ("86", "64", "32")  # x86, x64: architectures
                and not self.liang_next(i + cnt.end())
                and not self.unit_at(i + cnt.end())
            ):
                # T恤x2, 裤子x1: a count in an order, 乘二 (as ×3 is)
                self.add(i, i + 1, "num", "乘")
                self.add(i + 1, i + cnt.end(), "num", read_cardinal(cnt.group(1)))
                i += cnt.end()
                continue
            if c in "↑↓" and self._digit_after(i + 1):
                # 同比↑25%, 库存↓8%: a change, 上升/下降 (a gas ↑ after a formula stays silent)
                self.add(i, i + 1, "num", "上升" if c == "↑" else "下降")
                i += 1
                continue
            if c == "@" and 0 < i < n - 1 and is_latin_letter(t[i - 1]) and _is_digit(t[i + 1]):
                self.add(i, i + 1, "latin", "at")  # mAP@0.5, Recall@10: "at" the cut-off
                i += 1
                continue
            if c in _UNIT_CHARS and self._unit_after_magnitude(i):
                self.add(i, i + 1, "num", _UNIT_CHARS[c])  # 2.3万㎡ -> 二点三万平方米
                i += 1
                continue
            if c in _VULGAR_FRACTIONS:
                self.vulgar_fraction(i)
                i += 1
                continue
            if c in _SUBSCRIPT_DIGITS:
                i = self._subscript(i)
                continue
            cls = script_of(self.orig[i])
            if cls == "han":
                j = i + 1
                while j < n and is_han(t[j]):
                    j += 1
                self.add(i, j, "han", self.orig[i:j])
                i = j
            elif cls == "latin" and self._licence_plate(i):
                i = self._era_end  # 粤B·6D38F -> 粤 B 六 D 三八 F
            elif (
                cls == "latin"
                and (sun := _RE_SUN_RATING.match(t, i))
                and not (i > 0 and is_latin_letter(t[i - 1]))
            ):
                # SPF50+ PA++++: a sunscreen's ratings, each + said 加 (SPF 五十加, PA 加加加加)
                self.add(i, i + len(sun.group(1)), "latin", " ".join(sun.group(1).strip()))
                if sun.group(2):
                    self.add(sun.start(2), sun.end(2), "num", read_cardinal(sun.group(2)))
                if sun.group(3):
                    self.add(sun.start(3), sun.end(), "num", "加" * len(sun.group(3)))
                i = sun.end()
            elif cls == "latin" and self._roman_numeral(i):
                i = self._era_end  # II型糖尿病 -> 二型, III期临床 -> 三期, SATA III -> 三
            elif cls == "latin" and self._ion(i):
                i = self._era_end  # Na+ -> 钠离子, SO4²⁻ -> 硫酸根离子
            elif (cls == "latin" or c == "(") and self._chemical_formula(i):
                i = self._era_end  # H2SO4 -> H 二 S O 四 (mixvox.frontends.chem; tnen)
            elif (
                cls == "latin"
                and i + 2 < n
                and t[i + 1] == "2"
                and is_latin_letter(t[i + 2])
                and not (i > 0 and is_latin_letter(t[i - 1]))
                and not (i + 3 < n and (is_latin_letter(t[i + 3]) or _is_digit(t[i + 3])))
            ):
                # B2B, O2O: "B to B"; Y2K: "Y two K" (the year 2000, not a direction)
                two = "two" if t[i : i + 3].upper() in _TWO_CODES else "to"
                self.add(i, i + 3, "latin", f"{t[i]} {two} {t[i + 2]}")
                i += 3
            elif (
                c in "xX*"
                and 1 < i < n - 2
                and t[i - 1] == t[i + 1] == " "
                and _is_digit(t[i - 2])
                and _is_digit(t[i + 2])
            ):
                self.add(i, i + 1, "num", "乘")  # 1920 x 1080: a spaced dimension
                i += 1
            elif (
                c in "xX*"
                and 0 < i < n - 1
                and _is_digit(t[i - 1])
                and _is_digit(t[i + 1])
                and not (c == "X" and self.code_letter_after(i + 1))  # 7800X3D is a code
            ):
                self.add(i, i + 1, "num", "乘")  # 7x24, 1920x1080
                i += 1
            elif (
                c == "T"
                and self.pieces
                and self.pieces[-1].end == i
                and self.pieces[-1].spoken.endswith("日")
                and _RE_TIME.match(t, i + 1)
            ):
                self.add(i, i + 1, "punct", "")  # 2024-06-01T10:00:00: ISO 8601's T is silent
                i += 1
            elif cls == "latin" and self._architecture(i):
                i = self._era_end
            elif cls == "latin" and self._caps_function_word(i):
                i = self._era_end
            elif cls == "latin" and self._ampm_after_han_time(i):
                i = self._era_end
            elif cls == "latin" and self._era_after_date(i):
                i = self._era_end
            elif cls == "latin" and t[i : i + 3].lower() == "no." and self._digit_after(i + 3):
                self.add(i, i + 3, "latin", "No.")  # No.1, No. 12345: "number"
                i += 3
            elif cls == "latin" and self._unit_after_magnitude(i):
                u, j = self.unit_at(i) or ("", i)
                self.add(i, j, "num", _UNITS[u])  # 45亿kWh -> 四十五亿千瓦时
                i = j
            elif cls == "latin":
                j = self._latin_end(i)
                self.add(i, j, "latin", t[i:j])
                i = j
            elif c == "/" and i > 0 and is_latin_letter(t[i - 1]) and self._rate_unit(i + 1):
                u, j = self._rate_unit(i + 1) or ("", i + 1)
                self.add(i, j, "num", "每" + _RATE_UNITS[u])  # tokens/s -> tokens 每秒
                i = j
            elif cls == "space":
                i += 1
            elif cls == "digit":  # a digit the number rules did not take (cannot happen)
                self.add(i, i + 1, "num", read_digits(c))
                i += 1
            else:
                i = self.symbol(i, cls)
        self._dash_ranges()
        self._slash_alternatives()
        self._silent_marks()
        self._pause_between_numbers()
        return self.pieces

    def _pause_between_numbers(self) -> None:
        """Two numbers that only a space separates (``Llama 3.1 8B``, ``Llama 2 13B``, ``GPT-4
        32K``) get a short pause there: run together they are heard as one number (三点一八,
        二十三). Read as two numbers, each keeps its own reading."""
        ps, t = self.pieces, self.t
        out: list[Piece] = []
        for k, p in enumerate(ps):
            if k and out:
                a = out[-1]
                gap = t[a.end : p.start]
                if (
                    a.kind == p.kind == "num"
                    and gap
                    and not gap.strip(" ")
                    and _is_digit(t[a.end - 1])
                    and _is_digit(t[p.start])
                    and not (a.end - a.start == 1 and p.end - p.start == 1)  # 2 0 2 4: digits
                ):
                    out.append(Piece(a.end, p.start, "punct", "，"))
            out.append(p)
        self.pieces = out

    def _subscript(self, i: int) -> int:
        """``CO₂``, ``H₂O``, ``C₆H₁₂O₆``, ``PM₂.₅``: subscript digits (a formula's counts) are read
        as the number they write (二, 十二, 二点五), never dropped."""
        t = self.t
        j = i
        while j < self.n and t[j] in _SUBSCRIPT_DIGITS:
            j += 1
        digits = "".join(str(_SUBSCRIPT_DIGITS.index(c)) for c in t[i:j])
        if j + 1 < self.n and t[j] in ".." and t[j + 1] in _SUBSCRIPT_DIGITS:
            k = j + 1
            while k < self.n and t[k] in _SUBSCRIPT_DIGITS:
                k += 1
            frac = "".join(str(_SUBSCRIPT_DIGITS.index(c)) for c in t[j + 1 : k])
            self.add(i, k, "num", read_number(digits + "." + frac))
            return k
        self.add(i, j, "num", read_cardinal(digits) if len(digits) <= 2 else read_digits(digits))
        if j < self.n and _is_digit(t[j]):
            # log₁₀100, log₂8: a base and then the argument, two numbers (十，一百; not 十一百)
            self.pieces.append(Piece(j, j, "punct", "，"))
        return j

    def vulgar_fraction(self, i: int) -> None:
        """``½`` -> 二分之一, ``¾`` -> 四分之三; after digits it is the fraction of a mixed
        number (``2⅓`` -> 二又三分之一)."""
        c = self.t[i]
        frac = Fraction(unicodedata.numeric(c)).limit_denominator(10)
        spoken = (
            read_cardinal(str(frac.denominator), liang_bai=False)
            + "分之"
            + read_cardinal(str(frac.numerator), liang_bai=False)
        )
        ps = self.pieces
        if ps and ps[-1].end == i and ps[-1].kind == "num" and i and _is_digit(self.t[i - 1]):
            spoken = "又" + spoken
        self.add(i, i + 1, "num", spoken)

    def _hex_address(self, i: int) -> int:
        """An IPv6 address (``2001:db8::1``, ``fe80::1%eth0``, ``[::1]:8080``, ``::/0``) or a
        MAC address (``00:1A:2B:3C:4D:5E``) at ``i``: each hexadecimal digit on its own
        (digits in Chinese, letters spelled), an IPv6 colon 冒号 (``::`` is said: it stands for
        the zeros left out), a MAC separator silent (its groups have a fixed width).

        Validated by :mod:`ipaddress`, so times (``10:30``), ratios and scores never match."""
        t = self.t
        if i > 0 and (t[i - 1].isascii() and (t[i - 1].isalnum() or t[i - 1] in ":._")):
            return i
        m = _RE_MAC.match(t, i)
        if m:
            pos = i
            for k, part in enumerate(re.split("[:-]", m.group())):
                if k:
                    self.add(pos, pos + 1, "punct", "")
                    pos += 1
                self._hex_digits(pos, part)
                pos += len(part)
            return m.end()
        m = _RE_IPV6.match(t, i)
        if not m:
            return i
        cand = m.group().rstrip(".")
        if cand.count(":") < 2:
            return i
        try:
            ipaddress.IPv6Address(cand)
        except ValueError:
            return i
        pos = i
        end = i + len(cand)
        while pos < end:
            if t[pos] == ":":
                self.add(pos, pos + 1, "num", "冒号")
                pos += 1
                continue
            k = pos
            while k < end and t[k] != ":":
                k += 1
            part = t[pos:k]
            if "." in part:  # ::ffff:192.0.2.1, an IPv4 address at the end
                self.add(pos, k, "num", "点".join(read_digits(x) for x in part.split(".")))
            else:
                self._hex_digits(pos, part)
            pos = k
        zone = re.match(r"%[A-Za-z0-9]{1,15}", t[end:])
        if zone:  # fe80::1%eth0: the zone id after 百分号
            self.add(end, end + 1, "num", "百分号")
            pos = end + 1
            end += zone.end()
            for run in re.findall(r"[A-Za-z]+|\d+", t[pos:end]):  # eth0: eth 零
                self.add(
                    pos,
                    pos + len(run),
                    *(("num", read_digits(run)) if run[0].isdigit() else ("latin", run)),
                )
                pos += len(run)
        prefix = re.match(r"/(\d{1,3})(?!\d)", t[end:])
        if prefix and int(prefix.group(1)) <= 128:  # 2001:db8::/32: the prefix length
            self.add(end, end + 1, "num", "斜杠")
            self.add(end + 1, end + prefix.end(), "num", read_cardinal(prefix.group(1)))
            end += prefix.end()
        elif i > 0 and t[i - 1] == "[" and t.startswith("]:", end):
            port = _RE_PORT.match(t, end + 1)
            if port:  # [::1]:8080: the port digit by digit, as after an IPv4 address
                self.add(end, end + 1, "punct", "]")
                self.add(end + 1, end + 2, "punct", "")
                self.add(end + 2, port.end(), "num", read_digits(port.group(1)))
                end = port.end()
        return end

    def _hex_digits(self, pos: int, part: str) -> None:
        """Pieces for one group of hexadecimal digits: runs of digits in Chinese (digit by
        digit), each letter a letter word of its own."""
        k = 0
        while k < len(part):
            if _is_digit(part[k]):
                e = k
                while e < len(part) and _is_digit(part[e]):
                    e += 1
                self.add(pos + k, pos + e, "num", read_digits(part[k:e]))
                k = e
            else:
                self.add(pos + k, pos + k + 1, "latin", part[k].upper())
                k += 1

    def _silent_marks(self) -> None:
        """Marks that structure the text but are not said: they keep their ``punct`` piece
        (offsets, a pause) with nothing spoken.

        * ``-`` (or ``·``) glued between letters/digits that the number rules left alone
          (``GPT-4o``, ``Llama-2-7B``, ``TOP-5``, ``沪A·88888``): a joiner inside a code;
        * ``|`` (a table cell separator left inside a sentence);
        * ``/`` glued between letters and letters/digits (``A/B``, ``I/O``, ``ViT-L/16``);
        * a bullet (``-``, ``*``, ``•``, ``·``) at the start of the text before a space.
        """
        ps, t = self.pieces, self.t
        for k, p in enumerate(ps):
            if p.kind != "punct" or p.end - p.start != 1:
                continue
            c = p.spoken
            if c == "|":
                ps[k] = Piece(p.start, p.end, "punct", "")
            elif (
                c == "_" and 0 < k < len(ps) - 1 and ps[k - 1].end == p.start == ps[k + 1].start - 1
            ):
                ps[k] = Piece(p.start, p.end, "punct", "")  # max_tokens: the parts, no underscore
            elif c == "/" and 0 < k < len(ps) - 1:
                a, b = ps[k - 1], ps[k + 1]
                pair = (
                    a.kind == b.kind == "latin"
                    and len(a.spoken) <= 3
                    and len(b.spoken) <= 3
                    and a.spoken.isupper()
                    and b.spoken.isupper()
                )
                if a.end == p.start and b.start == p.end and (pair or a.kind == "latin" != b.kind):
                    ps[k] = Piece(p.start, p.end, "punct", "")  # A/B测试, I/O, ViT-L/16
            elif c in _BULLETS and k == 0 and p.end < self.n and t[p.end] == " ":
                if not t[: p.start].strip():
                    ps[k] = Piece(p.start, p.end, "punct", "")
            elif c in "-·・" and 0 < k < len(ps) - 1:
                a, b = ps[k - 1], ps[k + 1]
                if (
                    c == "-"
                    and a.kind == "han"
                    and b.kind == "num"
                    and a.spoken.endswith(_MODEL_PREFIXES)
                    and a.end == p.start == b.start - 1
                ):
                    ps[k] = Piece(p.start, p.end, "punct", "")  # 歼-20 -> 歼二十
                    continue
                if (
                    c == "-"
                    and a.kind == "latin"
                    and len(a.spoken) == 1
                    and a.spoken.islower()
                    and b.kind == "num"
                    and a.end == p.start == b.start - 1
                    and not (
                        a.start > 0 and (t[a.start - 1].isascii() and t[a.start - 1].isalpha())
                    )
                    and not (a.spoken == "k" and a.start > 0 and _is_digit(t[a.start - 1]))
                ):
                    ps[k] = Piece(p.start, p.end, "num", "减")  # n-1, i-2: a variable minus
                    continue
                if (
                    c == "-"
                    and a.kind == "num"
                    and a.spoken.endswith(("平方", "立方", "次方"))
                    and b.kind in ("latin", "num")
                    and a.end == p.start == b.start - 1
                ):
                    ps[k] = Piece(p.start, p.end, "num", "减")  # x²-2x+1: a power minus a term
                    continue
                if (
                    a.end == p.start
                    and b.start == p.end
                    and a.kind in ("latin", "num")
                    and b.kind in ("latin", "num")
                ):
                    # Llama-2-7B, Llama-3.1-8B, 6.8.0-45: after a version, or before a size,
                    # the joiner between two numbers is a short pause, as a space there is
                    # (二，七B; 三点一，八B: not 二七B, 三点一八B); GB/T 7714-2015 stays joined
                    size_next = k + 2 < len(ps) and ps[k + 2].kind == "latin"
                    size_next = size_next and ps[k + 2].start == b.end
                    pause = (
                        "，"
                        if a.kind == b.kind == "num"
                        and c == "-"
                        and (
                            "点" in a.spoken
                            or size_next
                            or _RE_MEMORY_CODE.search(t[max(0, a.start - 6) : a.end])
                        )
                        else ""
                    )
                    ps[k] = Piece(p.start, p.end, "punct", pause)

    def _roman_numeral(self, i: int) -> bool:
        """A Roman numeral in capitals that counts (``II型糖尿病``, ``III期临床试验``, ``IV期``,
        ``SATA III``): before a measure of kind or stage (型 期 级 类 代 度 …) or, for II and
        III, after a spaced all-capital name; read as the number (二型, 三期: it was spelled
        I I 型). Other capitals stay letters (``VI设计``, ``IV``). Sets ``_era_end``."""
        t = self.t
        if i > 0 and (is_latin_letter(t[i - 1]) or _is_digit(t[i - 1])):
            return False
        m = _RE_ROMAN.match(t, i)
        if m is None or m.group() not in _ROMAN_VALUES:
            return False
        end = m.end()
        nxt = self.after(end, 1)
        spaced_name = (
            m.group() in ("II", "III")
            and i > 2
            and t[i - 1] == " "
            and re.search(r"(?<![A-Za-z])[A-Z]{2,}$", t[max(0, i - 9) : i - 1]) is not None
            and not (nxt and nxt.isascii() and nxt.isalnum())
        )
        after_han = (
            m.group() in ("II", "III")
            and i > 0
            and is_han(t[i - 1])
            and not (nxt and nxt.isascii() and nxt.isalnum())
        )  # 钻石III, 黄金II: a tier after its name (II and III are no word nor acronym)
        # 5D Mark IV, Part II: after a spaced word that numbers a sequence; A7 III, RX100 VII:
        # after a spaced model code that ends in a digit (the camera's generation), said as
        # the number (it was spelled I V, I I I)
        before = re.search(r"(?<![A-Za-z0-9])([A-Za-z][A-Za-z0-9]*) $", t[max(0, i - 12) : i])
        generation = (
            before is not None
            and not (nxt and nxt.isascii() and nxt.isalnum())
            and (
                before.group(1).casefold() in _ROMAN_SEQUENCE_WORDS
                or (_is_digit(before.group(1)[-1]) and len(m.group()) >= 2)
            )
        )
        if not (nxt in _ROMAN_MEASURES or spaced_name or after_han or generation):
            return False
        if generation and before is not None and _is_digit(before.group(1)[-1]):
            self.add(i - 1, i, "punct", "，")  # A7 III: a pause, or A七三 is heard as A73
        self.add(i, end, "num", read_cardinal(str(_ROMAN_VALUES[m.group()])))
        self._era_end = end
        return True

    def _cell_start(self, i: int) -> int:
        """Where the spreadsheet cell that ends at ``i`` (``A1`` of ``A1:A10``) starts; ``i``
        when letters, digits and ``$`` do not end there, or when a letter or digit (a word,
        ``X1A1``) runs on before the cell's letters."""
        t = self.t
        k = i
        while k > 0 and i - k < 8 and _is_digit(t[k - 1]):
            k -= 1
        if t[k - 1 : k] == "$":
            k -= 1
        j = k
        while j > 0 and k - j < 3 and t[j - 1].isascii() and t[j - 1].isupper():
            j -= 1
        if t[j - 1 : j] == "$":
            j -= 1
        if (
            j == k
            or k == i
            or (j > 0 and t[j - 1].isascii() and (t[j - 1].isalnum() or t[j - 1] == "_"))
        ):
            return i
        return j

    def _column_range(self, i: int) -> bool:
        """The colon at ``i`` joins two column letters inside a formula's arguments: the range
        starts after ``(``, ``,`` or a sheet's ``!`` and ends before ``,`` or ``)``
        (``=SUM(C:C,A:A,…)``, ``Sheet2!A:B``)."""
        m = re.search(r"[(,!]\$?[A-Z]{1,3}$", self.t[max(0, i - 5) : i])
        after = re.match(r"\$?[A-Z]{1,3}[,)]", self.t[i + 1 : i + 6])
        return m is not None and after is not None

    def _cell_dollar(self, i: int) -> bool:
        """The ``$`` at ``i`` marks an absolute cell reference: it starts one (``$B$2``,
        ``$A1``: a ``$`` before letters is never money) or sits inside a range's cell
        (``A$1:A$10``, ``$A1:$A10``). ``US$20``, ``A$50`` outside a range stay money."""
        t = self.t
        s = i
        while s > 0 and i - s < 3 and t[s - 1].isascii() and t[s - 1].isupper():
            s -= 1
        if t[s - 1 : s] == "$":
            s -= 1
        if s > 0 and t[s - 1].isascii() and (t[s - 1].isalnum() or t[s - 1] == "_"):
            return False
        if _RE_ABSOLUTE_CELL.match(t, s):
            return True
        return t[s - 1 : s] == ":" and bool(_RE_CELL_RANGE.match(t, self._cell_start(s - 1)))

    def _working_hours(self, raw: str, i: int, end: int) -> bool:
        """``他们公司是996``: 996 after 是 whose subject is a workplace, or with a word of
        working hours earlier in its clause, is the working hours (九九六), not the amount it
        is after 价格是 …; no measure word or unit may follow (the caller checks)."""
        if raw != "996" or not self.before(i, 1) == "是":
            return False
        clause = re.split(r"[，,。；;！？!?]", self.context[-12:] + self.before(i, 16))[-1]
        if any(w in clause for w in ("加班", "上班", "作息", "工作制", "工作时间")):
            return True
        # 他们公司是996, 我们部门也是996 (but 公司的报价是996: the subject is the price)
        return (
            re.search(r"(?:公司|团队|大厂|单位|部门)(?:[都也还又就]|基本|一直)?是$", clause)
            is not None
        )

    def _building_label(self, i: int, end: int) -> bool:
        """``2栋`` that starts a clause and names a building (``2栋是新盖的``, ``3栋，2栋在东边``):
        a bare count of buildings can be no clause's subject without a set named before it
        (``有2栋``, ``其中2栋`` are counts and are caught before), so it is the building's
        number, 二栋. A count stays 两栋: a building noun after the measure (``2栋楼``,
        ``2栋别墅``), 都/全/分别/均 after it (each of two), or a count of buildings earlier in
        the sentence (``小区有3栋楼，2栋是新盖的``: two of them). Only 栋/幢 (座 also counts
        mountains and bridges). So is one right after a word of place or motion (在 到 去 回 往 进:
        ``快递放在2栋门口``, ``他去2栋找物业``)."""
        t = self.t
        place = i > 0 and t[i - 1] in "在到去回往进"  # 放在2栋门口, 他去2栋: a place, building 2
        if i > 0 and t[i - 1] not in "，,；;：:。！？!?、 \t\n" and not place:
            return False
        rest = t[end + 1 : end + 8]
        if place and rest.startswith(("之间", "中间", "的中间")):
            return False  # 在2栋之间: between two buildings
        if rest.startswith(_BUILDING_NOUNS) or re.match(r"[^，,。；;]{0,3}(?:都|全|分别|均)", rest):
            return False
        earlier = self.context + t[:i]
        if re.search(r"(?:有|共|建了?|盖了?)\s*[0-9两几一二三四五六七八九十]+\s*[栋幢]", earlier):
            return False
        if re.search(
            r"[0-9两几一二三四五六七八九十]+\s*[栋幢](?:楼|房|别墅|大楼|建筑|宿舍)", earlier
        ):
            return False
        return True

    def _cron(self, i: int) -> bool:
        """A cron schedule (``0 2 * * *``, ``*/5 * * * *``, ``30 8 * * 1-5``): each field on
        its own after a short pause, ``*`` 星 (the English frontend's "star"), ``/`` 斜杠, ``-``
        到, ``,`` 、;
        the numbers as cardinals. It used to lose its asterisks (零二). Five or six fields
        with a star among them, and a star at either end or two stars side by side, so that a
        spaced product (``2 * 3 * 4``, stars between numbers) stays 乘. Sets ``_era_end``."""
        t = self.t
        if i > 0 and (t[i - 1].isascii() and (t[i - 1].isalnum() or t[i - 1] in "*/,.-")):
            return False
        m = _RE_CRON.match(t, i)
        if m is None:
            return False
        fields = m.group().split(" ")
        stars = ["*" in f for f in fields]
        if not any(stars) or not (
            stars[0] or stars[-1] or any(a and b for a, b in zip(stars, stars[1:], strict=False))
        ):
            return False
        pos = i
        for n, f in enumerate(fields):
            if n:  # a short pause between fields: 零星斜杠二 would be heard as 零星 "sporadic"
                self.add(pos, pos + 1, "punct", "，")
                pos += 1
            spoken = re.sub(r"\d+", lambda d: read_cardinal(d.group(), liang_bai=False), f)
            spoken = spoken.replace("*", "星").replace("/", "斜杠").replace("-", "到")
            for k, part in enumerate(spoken.split(",")):
                if k:
                    self.add(pos, pos + 1, "punct", "、")
                    pos += 1
                width = len(f.split(",")[k])
                self.add(pos, pos + width, "num", part)
                pos += width
        self._era_end = m.end()
        return True

    def _ion(self, i: int) -> bool:
        """An ion at ``i`` (``Na+``, ``Cl-``, ``Fe3+``, ``SO4²⁻``, ``NH4+``; which tokens are
        ions is :func:`mixvox.frontends.chem.ion`), read by its Chinese name as chemistry
        classes say it: 钠离子, 氯离子, 铁离子, 亚铁离子 (Fe²⁺), 硫酸根离子; a 离子 written
        after it is not said twice. An ion without a name here is spelled with 离子 after it.
        Sets ``_era_end``."""
        t = self.t
        if i > 0 and t[i - 1].isascii() and t[i - 1].isalnum():
            return False
        m = _RE_ION_TOKEN.match(t, i)
        if m is None:
            return False
        end = m.end()
        if (
            t[end - 1] in "+-"
            and end < self.n
            and ((t[end].isascii() and t[end].isalnum()) or t[end] in "+-=/")
        ):
            return False  # Na+Cl, C++, A-1: an equation, a language, a code
        found = chem.ion(m.group(), self.context + t)
        if found is None:
            return False
        name = _ION_NAMES.get((found.body, found.charge)) or _ION_NAMES.get((found.body, 0))
        if name is None:
            parts = chem.parse(found.body, ion=True) or []
            name = "".join(
                chem.spelled(p.text) if p.kind == "symbol" else read_cardinal(p.text) for p in parts
            )
        self.add(i, end, "num", name if t.startswith("离子", end) else name + "离子")
        self._era_end = end
        return True

    def _licence_plate(self, i: int) -> bool:
        """A Chinese licence plate at ``i`` (after its province character): the city letter,
        an optional ``·``/space, then five characters (six on a new-energy plate) of capitals
        and digits with a digit among them (``粤B·6D38F``, ``京A 12345``, ``沪AD12345``). Every
        character is said on its own, the digits one by one with 一, the separator silent, as
        `沪A·88888` always was (it read 三十八 in ``6D38F``). Three capitals in a row are a
        model name, not a plate (``云RTX4090``). Sets ``_era_end``."""
        t = self.t
        if not (i > 0 and t[i - 1] in _PLATE_PROVINCES and "A" <= t[i] <= "Z"):
            return False
        m = _RE_PLATE_TAIL.match(t, i + 1)
        if m is None or not any(c.isdigit() for c in m.group(2)):
            return False
        if m.group(1) and m.end(1) == m.start(2):
            m = _RE_PLATE_TAIL_ONE.match(t, i + 1)  # 京AD12345: the D is the tail's
            if m is None:
                return False
        if re.search(r"[A-Z]{3}", t[i] + m.group(1) + m.group(2)):
            return False
        self.add(i, i + 1, "latin", t[i])
        if m.group(1):
            self.add(m.start(1), m.end(1), "latin", m.group(1))  # 沪AD·12345: a new-energy plate
        if m.start(2) > m.end(1):
            self.add(m.end(1), m.start(2), "punct", "")
        for r in re.finditer(r"\d+|[A-Z]", m.group(2)):
            a, z = m.start(2) + r.start(), m.start(2) + r.end()
            if r.group().isdigit():
                self.add(a, z, "num", read_digits(r.group()))
            else:
                self.add(a, z, "latin", r.group())
        self._era_end = m.end()
        return True

    def _chemical_formula(self, i: int) -> bool:
        """A chemical formula with subscripts at ``i`` (``H2O``, ``H2SO4``, ``Na2CO3``,
        ``Ca(OH)2``, ``CO₂``): each run of element symbols one Latin piece said letter by letter
        (spoken ``S O``: never the word "so"), each subscript a cardinal (``C6H12O6`` ->
        C 六 H 十二 O 六), parentheses silent. The rules of what is a formula are shared with
        the English frontend (:mod:`mixvox.frontends.chem`); formulas without digits (``NaCl``)
        go to it whole. Sets ``_era_end``."""
        t = self.t
        k = i
        while k > 0 and i - k < 3 and _is_digit(t[k - 1]):
            k -= 1  # 2H2O, CuSO4·5H2O: a coefficient, read by the number rules before
        if (k < i and t[k] == "0") or (k > 0 and t[k - 1].isascii() and t[k - 1].isalnum()):
            return False
        j = i
        while j < self.n and (
            (t[j].isascii() and (t[j].isalnum() or t[j] in "()")) or t[j] in _SUBSCRIPT_DIGITS
        ):
            j += 1
        token = t[i:j].translate(_SUBSCRIPT_TO_ASCII)
        while token.endswith("(") or (token.endswith(")") and token.count(")") > token.count("(")):
            token, j = token[:-1], j - 1  # H2O): a closing bracket of the sentence
        # a sign between two terms (2H2+O2=2H2O; not the plus of a model name: P9+上市)
        left, right = t[:k].rstrip(" "), t[i + len(token) :].lstrip(" ")
        equation = (
            left[-1:] in chem.EQUATION_SIGNS and left[-2:-1].isascii() and left[-2:-1].isalnum()
        ) or (
            right[:1] in chem.EQUATION_SIGNS
            and right[1:].lstrip(" ")[:1].isascii()
            and (right[1:].lstrip(" ")[:1].isupper() or right[1:].lstrip(" ")[:1].isdigit())
        )
        j = i + len(token)
        if not (equation or any(c.isdigit() for c in token)):
            return False
        parts = chem.parse(token, equation=equation)
        if parts is None:
            return False
        if (
            j < self.n
            and t[j] in "-_./"
            and j + 1 < self.n
            and t[j + 1].isascii()
            and t[j + 1].isalnum()
        ):
            return False  # CO2-laser, PS5.pro: a code glued to more
        k = i
        for m in re.finditer(r"[A-Z][a-z]?(?:[A-Z][a-z]?)*|\d+|[()]", token):
            a, z = i + m.start(), i + m.end()
            if m.group()[0].isdigit():
                self.add(a, z, "num", read_cardinal(m.group()))
            elif m.group() in "()":
                self.add(a, z, "punct", "")
            else:
                self.add(a, z, "latin", " ".join(m.group().upper()))
            k = z
        a = k
        while a < self.n and t[a] == " ":
            a += 1
        b = a + 1
        while b < self.n and t[b] == " ":
            b += 1
        if a < self.n and t[a] in "→⟶" and b < self.n and (t[b].isupper() or _is_digit(t[b])):
            self.add(a, a + 1, "num", "生成")  # C+O2→CO2: the arrow of a reaction
            k = a + 1
        self._era_end = k
        return True

    def _caps_function_word(self, i: int) -> bool:
        """``TO B``/``TO C``/``TO G`` (business jargon: to businesses, to consumers) and
        ``ON/OFF``: the capital function word is the English word (to, on), not letters
        (T O, O N). Sets ``_era_end``."""
        t = self.t
        if i > 0 and t[i - 1].isascii() and t[i - 1].isalnum():
            return False
        if (
            t.startswith("TO ", i)
            and i + 3 < self.n
            and t[i + 3] in "BCGD"
            and not (i + 4 < self.n and (t[i + 4].isascii() and t[i + 4].isalnum()))
        ):
            self.add(i, i + 2, "latin", "to")
            self._era_end = i + 2
            return True
        if re.match(r"ON ?/ ?OFF(?![A-Za-z])", t[i : i + 12]):
            self.add(i, i + 2, "latin", "on")
            self._era_end = i + 2
            return True
        return False

    def _architecture(self, i: int) -> bool:
        """``x86_64``, ``arm64``, ``aarch64``, ``amd64``, ``i386``, ``s390x`` (not glued after a
        letter or digit): the letters as Latin words, the digits one by one as people say them
        (x 八六 六四, arm 六四: never 六十四, nor 三百九十倍 for s390x), the ``_``/``-`` silent.
        ``aarch``, ``loongarch`` and ``riscv`` are said by their parts (A arch, loong arch,
        RISC-V); ``ARM`` is the word "arm", as its maker says it. Sets ``_era_end`` to the end."""
        t = self.t
        if i > 0 and (t[i - 1].isascii() and (t[i - 1].isalnum() or t[i - 1] == "_")):
            return False
        m = ARCH_NAME.match(t, i)
        if not m:
            return False
        for part in re.finditer(r"(?i)a(?=arch)|loong(?=arch)|arm(?=v)|[a-z]+|\d+|[_-]", m.group()):
            a, b = i + part.start(), i + part.end()
            word = part.group()
            if word in "_-":
                self.add(a, b, "punct", "")
            elif word.isdigit():
                self.add(a, b, "num", read_digits(word))
            else:
                said = {"riscv": "RISC-V", "arm": "arm"}.get(word.lower(), word)
                self.add(a, b, "latin", said)  # ARM64: the company's name is said "arm"
        self._era_end = m.end()
        return True

    def _latin_end(self, i: int) -> int:
        """End of the Latin word at ``i``: letters, inner hyphens (Wi-Fi), ``++``/``#`` (C++)."""
        t, n = self.t, self.n
        j = i + 1
        size_suffix = i > 0 and _is_digit(t[i - 1])  # the B of 72B-Instruct, 7B-Chat
        while j < n:
            if is_latin_letter(t[j]):
                j += 1
            elif t[j] in "-'" and j + 1 < n and is_latin_letter(t[j + 1]):
                if t[j] == "-" and size_suffix and j - i <= 2:
                    break  # 72B-Instruct: the size, then the variant's name
                j += 2
            else:
                break
        if t.startswith("++", j) or (j < n and t[j] == "#" and j - i == 1):
            j += 2 if t[j] == "+" else 1  # C++, C#, F#
        elif (
            j - i >= 4  # not IPv6 (a lexicon word: I P V)
            and t[j - 1] == "v"
            and j < n
            and _is_digit(t[j])
            and (t[j - 2].isupper() or any(c.isupper() for c in t[i + 1 : j - 1]))
            and "-" not in t[i:j]
        ):
            j -= 1  # YOLOv8, DINOv2, IPv6: the name, then the version (v 八)
        return j

    def _era_after_date(self, i: int) -> bool:
        """``1823年3月bc``: an era after a date written with 年/月/日 prefixes it (公元前)."""
        m = _ERA.match(self.t, i)
        ps = self.pieces
        if not m or not ps or ps[-1].kind != "han" or ps[-1].spoken[-1:] not in "年月日":
            return False
        k = len(ps) - 1
        first = None
        while (
            k >= 0
            and ps[k].kind in ("num", "han")
            and (k == len(ps) - 1 or ps[k].end == ps[k + 1].start)
        ):
            if ps[k].kind == "han" and not all(c in "年月日号" for c in ps[k].spoken):
                break
            if ps[k].kind == "num":
                first = k
            k -= 1
        if first is None or "年" not in "".join(p.spoken for p in ps[first:]):
            return False
        prefix = "公元前" if m.group(1)[0] in "bB" else "公元"
        ps[first] = Piece(ps[first].start, ps[first].end, "num", prefix + ps[first].spoken)
        self.add(i, m.end(), "num", "")  # said by the prefix
        self._era_end = m.end()
        return True

    def _range_after_quantity(self, i: int) -> bool:
        """A dash/tilde after a number with its Han unit and before another number is 到."""
        t = self.t
        if i < 2 or i + 1 >= self.n:
            return False
        nxt = t[i + 1]
        if not (_is_digit(nxt) or (nxt in "¥￥$" and i + 2 < self.n and _is_digit(t[i + 2]))):
            return False
        prev = t[i - 1]
        if not (is_han(prev) or prev in "%‰℃"):
            return False
        if prev in _NOT_UNIT_CHARS:
            return False  # 5比-3, 从-5降到-10: a word before a negative number, no unit
        m = _RE_NUMBER.match(t, i + 1)
        unit = self.unit_at(m.end()) if m else None
        if unit and unit[0] in _TEMPERATURE_UNITS and prev != "℃" and prev != "度":
            return False  # 5日-3℃: a date, then a temperature below zero
        return _is_digit(t[i - 2]) or (i >= 3 and is_han(t[i - 2]) and _is_digit(t[i - 3]))

    def _digit_after(self, j: int) -> bool:
        if j < self.n and self.t[j] == " ":
            j += 1
        return j < self.n and _is_digit(self.t[j])

    def _leading_dot_decimal(self, i: int) -> bool:
        """``.22`` (a decimal without its 0), not ``a.b`` or the end of a sentence."""
        t = self.t
        if not (i + 1 < self.n and _is_digit(t[i + 1])):
            return False
        prev = t[i - 1] if i > 0 else ""
        return not (prev and (prev.isascii() and (prev.isalnum() or prev in "._/")))

    def _amount_group(self, k: int, step: int) -> tuple[tuple[str, ...], int] | None:
        """The amount that ends (``step`` -1) or starts (``step`` 1) next to piece ``k``: a
        number piece with at most one glued letter piece on each side (``8GB``, ``v2.3``,
        ``H100``), as a shape (kinds and letters, case folded) and its far piece index."""
        ps, j = self.pieces, k
        shape: list[str] = []
        edge = ps[k].start if step < 0 else ps[k].end
        while 0 <= j + step < len(ps) and len(shape) < 3:
            q = ps[j + step]
            if (q.end if step < 0 else q.start) != edge or q.kind not in ("num", "latin"):
                break
            if q.kind == "latin" and not (q.end - q.start <= 3 and q.spoken.isalpha()):
                break
            shape.append(q.spoken.casefold() if q.kind == "latin" else "#")
            edge = q.start if step < 0 else q.end
            j += step
        if step < 0:
            shape.reverse()
        if shape.count("#") != 1 or len(shape) < 2:
            return None  # bare numbers have rules of their own (fractions, dates, lists)
        return tuple(shape), j

    def _slash_alternatives(self) -> None:
        """``8GB/16GB``, ``1.5B/7B``, ``v2.3/v2.4``, ``H100/H200``: amounts or versions of one
        shape (the same letters glued on the same side) around a slash are alternatives, read
        或 (two or more: 、 between the first ones), as ``256/512GB``; the slash was silent and
        the two ran together (八GB十六GB)."""
        ps, t = self.pieces, self.t
        chain: list[int] = []
        chain_end = -1  # index of the last piece of the chain's last amount
        for k, p in enumerate(ps):
            if p.kind != "punct" or t[p.start : p.end] != "/":
                continue
            left, right = self._amount_group(k, -1), self._amount_group(k, 1)
            if left is None or right is None or left[0] != right[0]:
                continue
            one_digit = ps[k - 1].end - ps[k - 1].start == 1  # the number before the slash
            if left[0][0] not in ("#", "v") and one_digit:
                continue  # B1/B2签证, P0/P1: short codes (a letter, one digit), no alternatives
            if chain and chain_end + 1 != k:  # 8GB/16GB和1TB/2TB: two pairs, two 或
                self._mark_alternatives(chain)
                chain = []
            chain.append(k)
            chain_end = right[1]
        self._mark_alternatives(chain)

    def _mark_alternatives(self, chain: list[int]) -> None:
        """The slashes of one chain of alternatives: 、 between the first ones, 或 last."""
        ps = self.pieces
        for n, k in enumerate(chain):
            p = ps[k]
            if n == len(chain) - 1:
                ps[k] = Piece(p.start, p.end, "num", "或")
            else:
                ps[k] = Piece(p.start, p.end, "punct", "、")

    def _dash_ranges(self) -> None:
        """A dash or tilde glued between two number pieces reads 到 (10:30-11:00).

        Not inside a model code (``i7-12700K``: the dash follows digits glued to letters).
        """
        ps = self.pieces
        for k in range(1, len(ps) - 1):
            p = ps[k]
            a, b = ps[k - 1], ps[k + 1]
            times = (
                p.kind == "punct"
                and a.kind == "num"
                and a.end == p.start
                and b.start == p.end
                and bool(_RE_CLOCK_SPOKEN.search(a.spoken))
            )
            if (
                times
                and p.spoken in _RANGE_DASHES
                and b.kind == "han"
                and b.spoken.startswith(("次日", "翌日", "第二天", "隔天", "次晨"))
            ):
                ps[k] = Piece(p.start, p.end, "num", "到")  # 21:00-次日2:00: 到
                continue
            if times and p.spoken == "/" and b.kind == "num" and _RE_CLOCK_SPOKEN.search(b.spoken):
                ps[k] = Piece(p.start, p.end, "punct", "、")  # 8:00/12:00/18:00: a list of times
                continue
            if p.kind == "punct" and p.spoken in _RANGE_DASHES and p.end - p.start == 1:
                spaced_tilde = p.spoken in "~～" and a.kind == b.kind == "num"  # 3 ~ 5 天
                spaced_tilde = spaced_tilde or (
                    a.kind == b.kind == "num"
                    and "点" in a.spoken
                    and b.spoken.endswith(("点", "分", "秒"))
                    and a.spoken.endswith(("点", "分", "秒"))
                )  # 9:00am - 11:30am: two times
                spaced_dash = (
                    p.spoken == "-"
                    and a.kind == b.kind == "num"
                    and self.t[a.end : p.start] == " "
                    and self.t[p.end : b.start] == " "
                    and a.spoken[-1:] not in "点分秒"
                )
                if (a.end != p.start or b.start != p.end) and not (spaced_tilde or spaced_dash):
                    continue
                code = k >= 2 and ps[k - 2].kind == "latin" and ps[k - 2].end == a.start
                code = code or (
                    k >= 3
                    and ps[k - 2].spoken == "-"
                    and ps[k - 2].end == a.start
                    and ps[k - 3].kind == "latin"
                )
                if (
                    not code
                    and a.kind == "num"
                    and self.t[a.start : a.end].count(".") >= 2
                    and "点" in a.spoken  # a version, not a date (2024.5.1-2024.5.5)
                ):
                    code = True  # 6.8.0-45-generic: a version's build number, no range
                if not code and a.kind == "num":
                    brand = self._brand_before(a.start)
                    code = brand is not None and self.brands.get(brand[0].casefold()) == "standard"
                if a.kind == "num" and b.kind == "num" and not code and spaced_dash:
                    # 比分是 3 - 2: a spaced dash between two numbers is 比 after a score word,
                    # 减 before =, else 到 (it used to be silent: 三二)
                    if any(c in self.before(a.start, 8) for c in _DASH_SCORE_BEFORE):
                        word = "比"
                    elif self.t[b.end : b.end + 2].lstrip(" ")[:1] == "=":
                        word = "减"
                    else:
                        word = "到"
                    ps[k] = Piece(p.start, p.end, "num", word)
                elif a.kind == "num" and b.kind == "num" and not code:
                    # 10²-1: after a power the dash is a minus, not a range
                    power = a.spoken.endswith(("平方", "立方", "次方"))
                    ps[k] = Piece(p.start, p.end, "num", "减" if power else "到")
                elif (
                    a.kind == "latin"
                    and a.spoken in ("k", "K")
                    and k >= 2
                    and ps[k - 2].kind == "num"
                    and ps[k - 2].end == a.start
                    and b.kind == "num"
                    and not (
                        k >= 3 and ps[k - 3].kind == "latin" and ps[k - 3].end == ps[k - 2].start
                    )
                ):
                    ps[k] = Piece(p.start, p.end, "num", "到")  # 月薪15k-25k: 十五K到二十五K

    def add(self, i: int, j: int, kind: str, spoken: str, issue: tuple[str, str] | None = None):
        if kind == "num" and len(spoken) > 2 * _MAX_RULE_DIGITS and j - i > 1:
            # A huge number read out (``1,234,…``, ``0.000…``, ``1.1.1.…``): pieces of at most
            # _MAX_RULE_DIGITS characters, so that no word outgrows a synthesis chunk (chunks
            # never split a word). The input range is shared out in proportion; readings of
            # this length are digit by digit, so that is close to the digits each piece says.
            n, parts = len(spoken), min(-(-len(spoken) // _MAX_RULE_DIGITS), j - i)
            for p in range(parts):
                a, b = i + (j - i) * p // parts, i + (j - i) * (p + 1) // parts
                piece = spoken[n * p // parts : n * (p + 1) // parts]
                self.pieces.append(Piece(a, b, kind, piece, issue if p == 0 else None))
            return
        self.pieces.append(Piece(i, j, kind, spoken, issue))

    def _sign_or_currency_starts_number(self, i: int) -> bool:
        t = self.t
        if t[i] in "-+±" and i + 1 < self.n and _is_digit(t[i + 1]):
            if t[i] == "-" and self._range_after_quantity(i):
                return False  # 9月1日-9月5日: a range, not a sign
            prev = t[i - 1] if i > 0 else ""
            if prev and prev in "²³¹⁰⁴⁵⁶⁷⁸⁹":
                return False  # x²+2x: an operator after a power, not a sign
            if self.before(i, 3).upper() in ("UTC", "GMT"):
                return True  # UTC+8: a time-zone offset
            if t[i] == "-" and self.before(i, 2).endswith(_MODEL_PREFIXES):
                return False  # 歼-20, 东风-41: a model's dash, silent
            return not (prev and prev.isascii() and (prev.isalnum() or prev in "%)"))
        if t[i] in "-−" and i + 2 < self.n and any(t.startswith(c, i + 1) for c in "¥￥$€£"):
            return _is_digit(t[i + 2]) and not (i and t[i - 1].isascii() and t[i - 1].isalnum())
        for cur in _CURRENCY_KEYS:
            if t.startswith(cur, i):
                k = i + len(cur)
                if k < self.n and t[k] == " ":
                    k += 1
                if k + 1 < self.n and t[k] in "-−" and _is_digit(t[k + 1]):
                    k += 1  # ¥-30
                if k < self.n and _is_digit(t[k]):
                    return not (cur[0].isalpha() and i > 0 and is_latin_letter(t[i - 1]))
        return False

    def symbol(self, i: int, cls: str) -> int:
        t, orig = self.t, self.orig
        c = orig[i]
        if (
            c == "+"
            and re.search(r"(?<![A-Za-z])(?:" + _PLUS_NAMES + r")$", t[max(0, i - 12) : i])
            and not (i + 1 < self.n and (t[i + 1].isascii() and t[i + 1].isalnum()))
            and not (i + 1 < self.n and t[i + 1] in "+=")
        ):
            # Mate 70 Pro+, Disney+, Apple TV+: the plus of a name, said "plus" as in English
            # (GPT+插件, a+b keep 加: a sum of two things)
            self.add(i, i + 1, "latin", "plus")
            return i + 1
        if c in "-−" and t.startswith(("百分之", "千分之", "万分之"), i + 1):
            prev = t[i - 1] if i > 0 else ""
            if not (prev and prev.isascii() and prev.isalnum()):
                self.add(i, i + 1, "num", "负")  # -百分之1
                return i + 1
        if (
            c == "/"
            and 0 < i < self.n - 1
            and is_han(t[i + 1])
            and (
                is_han(t[i - 1])
                or is_latin_letter(t[i - 1])
                or (self.pieces and self.pieces[-1].end == i and self.pieces[-1].kind == "num")
            )
            and any(_is_digit(x) for x in self.before(i, 8))
        ):
            self.add(i, i + 1, "num", "每")  # 3.5元/斤 -> 三点五元每斤
            return i + 1
        count = _RE_NUMBER.match(t, i + 1) if c == "/" else None
        if count and self._price_before(i) and is_latin_letter(self.after(count.end(), 1) or "0"):
            self.add(i, i + 1, "num", "每")  # $0.15/1M tokens: a price per a count, 每一M
            return i + 1
        if (
            c == "/"
            and 0 < i < self.n - 1
            and _is_digit(t[i + 1])
            and self.pieces
            and self.pieces[-1].end == i
            and (
                (self.pieces[-1].kind == "num" and is_latin_letter(t[i - 1]))
                or (is_han(t[i - 1]) and any(_is_digit(x) for x in self.before(i, 5)))
            )
        ):
            m = _RE_NUMBER.match(t, i + 1)
            unit = self.unit_at(m.end()) if m and "," not in m.group() else None
            if m and unit and not (m.end() < self.n and t[m.end()] == " "):
                # 12元/500g, 5mg/10kg, 2000千焦/100g: an amount per a measured amount (每);
                # 7.5L/100km is 每百公里 (百公里油耗, as a fuel figure is said)
                name = "公里" if unit[0] == "km" else _UNITS[unit[0]]
                if m.group() == "100":
                    self.add(i, unit[1], "num", "每百" + name)
                else:
                    self.add(i, unit[1], "num", "每" + read_number(m.group()) + name)
                return unit[1]
        if c == "/" and 0 < i < self.n - 1 and is_latin_letter(t[i + 1]) and self._price_before(i):
            k = self._latin_end(i + 1)
            per = _PER_TIME_WORDS.get(t[i + 1 : k].lower())
            if per:  # $19.99/month -> 十九点九九美元每月
                self.add(i, k, "num", "每" + per)
                return k
            self.add(i, i + 1, "num", "每")  # $0.002/token -> 零点零零二美元每 token
            return i + 1
        if (
            c == "/"
            and 0 < i < self.n - 1
            and is_han(t[i - 1])
            and is_latin_letter(t[i + 1])
            and any(_is_digit(x) for x in self.before(i, 8))
        ):
            k = i + 1
            while k < self.n and k - i <= 4 and is_latin_letter(t[k]):
                k += 1
            letters = t[i + 1 : k]
            unit = self.unit_at(i + 1)
            if unit and unit[1] == k and letters not in _RATE_UNITS:
                self.add(i, k, "num", "每" + _UNITS[unit[0]])  # 5元/kg -> 五元每千克
                return k
            if letters.lower() in _SEGMENT_UNITS and letters not in _RATE_UNITS:
                self.add(i, i + 1, "num", "每")  # 0.12元/GB/月 -> 零点一二元每 G B 每月
                return i + 1
        if (
            c == "/"
            and self.pieces
            and self.pieces[-1].end == i
            and self.pieces[-1].kind == "num"
            and (is_latin_letter(t[i - 1]) or t[i - 1] in _SUPERSCRIPT_DIGITS or t[i - 1] in "″\"'")
        ):
            unit = self.unit_at(i + 1)
            if unit and (i + 1 >= self.n or t[i + 1] != " "):
                self.add(i, unit[1], "num", "每" + _UNITS[unit[0]])  # 0.05mg/L -> 毫克每升
                return unit[1]
        if c == "/" and 0 < i and (is_latin_letter(t[i - 1]) or is_han(t[i - 1])):
            m = _RE_PER_TIME.match(t[i + 1 : i + 5])
            if m and any(_is_digit(x) for x in self.before(i, 8)):
                per = {"s": "秒", "h": "小时", "min": "分钟", "ms": "毫秒", "d": "天"}[m.group(1)]
                self.add(i, i + 1 + m.end(), "num", "每" + per)  # 7000MB/s -> 七千 M B 每秒
                return i + 1 + m.end()
        if c == "^" and 0 < i < self.n - 1:
            prev = t[i - 1]
            neg = t[i + 1] == "-"
            m = _RE_NUMBER.match(t, i + 1 + neg)
            if m and (_is_digit(prev) or is_latin_letter(prev) or prev == ")"):
                # 2^10 -> 二的十次方, 10^-6 -> 十的负六次方
                exp = ("负" if neg else "") + read_number(m.group())
                self.add(i, m.end(), "num", "的" + exp + "次方")
                return m.end()
        if c in _SUPERSCRIPT_DIGITS or (
            c in "⁻⁺" and (self.after(i + 1, 1) or " ") in _SUPERSCRIPT_DIGITS
        ):
            j = self._superscript_power(i)
            if j > i:
                return j
        if c in ">→»›" and self._menu_step(i):
            self.add(i, i + 1, "punct", "")  # File > Settings: a menu path, a pause
            return i + 1
        if t.startswith(("===", "!=="), i):
            # a === b: strict equality of JavaScript, 全等于 (不全等于), not 等于等于等于
            self.add(i, i + 3, "num", "全等于" if c == "=" else "不全等于")
            return i + 3
        two = t[i : i + 2]
        if len(two) == 2 and two in _SYMBOLS:
            self.add(i, i + 2, "num", _SYMBOLS[two])
            return i + 2
        if t[i] in _SYMBOLS:
            self.add(i, i + 1, "num", _SYMBOLS[t[i]])
            return i + 1
        # ・ (katakana middle dot) separates the parts of foreign names in Chinese too
        # (约翰・史密斯): punctuation, not kana.
        if cls == "punct" or (cls == "symbol" and t[i] in "~^|\\`") or c in "・･":
            # the folded form of a symbol (～ ｜ ＾ are ~ | ^: 9:00～18:00 is a range)
            self.add(i, i + 1, "punct", t[i] if cls == "symbol" else c)
        elif cls == "emoji":
            j = i + 1
            while j < self.n and is_emoji(orig[j]):
                j += 1
            self.add(i, j, "skip", "", ("emoji", "emoji are not spoken"))
            return j
        elif cls == "control":
            self.add(i, i + 1, "skip", "", _control_issue(c))
        elif cls in ("kana", "hangul"):
            self.add(i, i + 1, "skip", "", ("unsupported-script", f"{cls} is not read by zh"))
        else:
            self.add(i, i + 1, "skip", "", ("unreadable", f"cannot read U+{ord(c):04X} in zh"))
        return i + 1

    # -- numbers ---------------------------------------------------------------------------
    def number(self, i: int) -> int:
        """Try the number rules at ``i``; add pieces and return the new position."""
        t = self.t
        j = i
        while j < self.n and "0" <= t[j] <= "9":
            j += 1
        if j - i > _MAX_RULE_DIGITS:  # huge digit run: no rules, digit by digit
            # even pieces of at most _MAX_RULE_DIGITS digits: a word never outgrows a chunk
            parts = -(-(j - i) // _MAX_RULE_DIGITS)
            for p in range(parts):
                a, e = i + (j - i) * p // parts, i + (j - i) * (p + 1) // parts
                self.add(a, e, "num", read_digits(t[a:e]))
            return j
        for rule in self._rules:
            end = rule(self, i)
            if end > i:
                return end
        return i

    def _r_diff_stat(self, i: int) -> int:
        """``+512/-128行``, ``+512 -128``: lines added and removed (a diff's stat), 加五百一十二、
        减一百二十八行; it was 正五百一十二负一百二十八 (two signed numbers run together). The
        行 after the pair stays the text's own word (said once, háng as after any count: put
        into the numbers' reading it was read xíng); ``a+512`` (a sum) is no stat."""
        t = self.t
        m = _RE_DIFF_STAT.match(t, i)
        if m is None or (i > 0 and t[i - 1].isascii() and (t[i - 1].isalnum() or t[i - 1] in ")]")):
            return i
        if self.unit_at(m.end()) or self.after(m.end(), 1) in _QUANTITY_NEXT - {"行"}:
            return i  # +5/-3℃, +2/-1分: signed amounts of a unit, no lines
        a_end = i + 1 + len(m.group(1))
        b_start = m.end() - len(m.group(2)) - 1
        a, b = m.group(1).replace(",", ""), m.group(2).replace(",", "")  # +1,024/-256
        self.add(i, a_end, "num", "加" + read_cardinal(a, liang_bai=False))
        self.add(a_end, b_start, "punct", "、")
        self.add(b_start, m.end(), "num", "减" + read_cardinal(b, liang_bai=False))
        return m.end()

    def _r_currency(self, i: int) -> int:
        t = self.t
        if _RE_ABSOLUTE_CELL.match(t, i) or (t[i - 1 : i] == ":" and self._cell_dollar(i)):
            return i  # =SUM(A$1:A$10): a cell of a range, not fifty Australian dollars
        for cur in _CURRENCY_KEYS:
            if t.startswith(cur, i):
                k = i + len(cur)
                if k < self.n and t[k] == " ":
                    k += 1
                neg = k + 1 < self.n and t[k] in "-−" and _is_digit(t[k + 1])
                m = _RE_NUMBER.match(t, k + neg)  # ¥-30.00: a negative amount
                if not m:
                    return i
                end = m.end()
                if cur == "EUR" and self._shoe_size(i, end):
                    return i  # EUR 42码: the European size, E U R 四十二码 (no money)
                name = _CURRENCY_PREFIX[cur]
                num = m.group().replace(",", "")
                mult = ""
                if t.startswith("万亿", end):
                    mult = "万亿"  # $3万亿 -> 三万亿美元
                    end += 2
                elif end < self.n and t[end] in "万亿":
                    mult = t[end]
                    end += 1
                elif (
                    end < self.n
                    and t[end] == "T"
                    and not (end + 1 < self.n and is_latin_letter(t[end + 1]))
                ):
                    mult = "万亿"  # $3T, $3.5T: a trillion, 三万亿 / 三点五万亿美元
                    end += 1
                elif (
                    end < self.n
                    and t[end] in _MAGNITUDES
                    and not (end + 1 < self.n and is_latin_letter(t[end + 1]))
                ):
                    # $2M -> 两百万美元, $10B -> 一百亿美元, $1.5K -> 一千五百美元
                    num = _scaled(num, _MAGNITUDES[t[end]])
                    end += 1
                ip, _, fp = num.partition(".")
                if fp.rstrip("0") and len(fp) <= 2:
                    num = ip + "." + fp.rstrip("0")  # ¥1.50 -> 一点五元, $2.00 -> 两美元
                elif len(fp) <= 2:
                    num = ip
                w = end + 1 if t[end : end + 1] == " " else end  # "¥ 7,000 元"
                if t.startswith((name, *_CURRENCY_SAME.get(name, ())), w) or (
                    name == "元" and t.startswith(("元", "块", "日元", "円"), w)
                ):  # ¥19,800日元: ¥ is the yen sign too, the written 日元 says which
                    name = ""  # ￥1,234.50元: the written 元 says it (once)
                spoken = ("负" if neg else "") + read_number(num, liang=not neg) + mult + name
                self.add(i, end, "num", spoken)
                return end
        return i

    def _shoe_size(self, i: int, end: int) -> bool:
        """``EUR 42码``, ``尺码：EUR 43``, ``鞋码EUR 38.5``: a number after ``EUR`` is a size of
        the European system when 码/号 follows it or a word of sizes or shoes comes shortly
        before (``价格EUR 42`` stays money)."""
        nxt = self.after(end, 2).lstrip(" ")
        if nxt[:1] in ("码", "号") and not self.after(end, 3).lstrip(" ").startswith("号码"):
            return True
        return any(w in self.before(i, 8) for w in _SIZE_WORDS)

    def _r_negative(self, i: int) -> int:
        t = self.t
        if t[i] not in "-+±":
            return i
        tz = _RE_TZ_OFFSET.match(t, i)
        if tz and self.before(i, 3).upper() in ("UTC", "GMT"):
            # UTC+8, GMT+08:00, UTC-05:30: the offset in hours (and minutes)
            h, mi = int(tz.group(2)), int(tz.group(3) or 0)
            spoken = ("加" if tz.group(1) == "+" else "减") + read_cardinal(str(h))
            if mi:
                spoken += "小时" + read_cardinal(str(mi)) + "分"
            self.add(i, tz.end(), "num", spoken)
            return tz.end()
        sign = {"-": "负", "+": "正", "±": "正负"}[t[i]]
        m = _RE_NUMBER.match(t, i + 1)
        if not m and t[i] == "-":
            before = len(self.pieces)
            j = self._r_currency(i + 1)  # -¥30, -$5.5: the sign of an amount
            if j > i + 1:
                first = self.pieces[before]
                first.start = i
                first.spoken = "负" + first.spoken
                return j
        if not m:
            return i
        end = m.end()
        if (
            t[i] == "+"
            and m.group() == "1"
            and (i == 0 or is_han(t[i - 1]) or t[i - 1] == " ")
            and not (end < self.n and (t[end] in "%‰." or self.unit_at(end)))
        ):
            self.add(i, end, "num", "加一")  # 我+1: a vote for it, not "positive one"
            return end
        if end < self.n and t[end] == "%":
            self.add(i, end + 1, "num", sign + "百分之" + read_number(m.group(), liang_bai=False))
            return end + 1
        unit = self.unit_at(end)
        rng = _RE_TEMP_RANGE_END.match(t, end) if t[i] == "-" else None
        if rng:  # -5~3℃ -> 零下五到三摄氏度 (the sign is never lost)
            hi = ("零下" if rng.group(1) else "") + read_number(rng.group(2))
            spoken = "零下" + read_number(m.group()) + "到" + hi + _UNITS[rng.group(3)]
            self.add(i, rng.end(), "num", spoken)
            return rng.end()
        if (
            t[i] == "-"
            and self.after(end, 1) == "度"
            and any(cue in self.before(i, 6) for cue in _TEMPERATURE_CUES)
        ):
            self.add(i, end, "num", "零下" + read_number(m.group()))  # 气温-5度 -> 零下五度
            return end
        if t[i] == "-" and unit and unit[0] in _TEMPERATURE_UNITS:
            self.add(i, unit[1], "num", "零下" + read_number(m.group()) + _UNITS[unit[0]])
            return unit[1]
        # read the magnitude with the ordinary rules, then put the sign in front
        before = len(self.pieces)
        j = self.number(i + 1)
        if j <= i + 1:
            return i
        first = self.pieces[before]
        first.start = i
        first.spoken = sign + first.spoken
        return j

    def _r_phone(self, i: int) -> int:
        if i > 0 and _is_digit(self.t[i - 1]):
            return i
        area = _RE_AREA_CODE.match(self.t, i - 1) if i > 0 else None
        if area and self.t[i - 1] in "(（":
            # (010)12345678, （0755）8888-6666: the area code and the number, digit by digit
            code_end = i + len(area.group(1))
            self.add(i, code_end, "num", read_digits(area.group(1), yao=True))
            self.add(code_end, code_end + 1, "punct", self.orig[code_end])
            pos = code_end + 1
            for k, part in enumerate(re.split("([- ])", area.group(2))):
                if k % 2:
                    self.add(pos, pos + 1, "punct", "")
                else:
                    self.add(pos, pos + len(part), "num", read_digits(part, yao=True))
                pos += len(part)
            return area.end()
        m = _RE_MOBILE.match(self.t, i) or _RE_LANDLINE.match(self.t, i)
        if not m:
            groups = _RE_SPACED_GROUPS.match(self.t, i)
            cue = self.before(i, 8).rstrip(" \t\u3000是为:：")
            if groups and (cue.endswith(_ID_CUES_WORDS) or cue.endswith(("会议号", "会议ID"))):
                # 会议号：826 5530 9972: digit groups of an identifier, each digit by digit,
                # the spaces a short pause (as the groups are read out)
                pos = i
                for k, part in enumerate(re.split("( )", groups.group())):
                    if k % 2:
                        self.add(pos, pos + 1, "punct", "")
                    else:
                        self.add(pos, pos + len(part), "num", read_digits(part, yao=True))
                    pos += len(part)
                return groups.end()
            return i
        plus = "加" if m.group().startswith("+") else ""
        self.add(i, m.end(), "num", plus + read_digits(m.group(), yao=True))
        return m.end()

    def _r_sci(self, i: int) -> int:
        """``1e-5`` -> 一 E 负五, ``2.5E+3`` -> 二点五 E 三: the exponent's sign is always said."""
        m = _RE_SCI.match(self.t, i)
        if not m or (i > 0 and is_latin_letter(self.t[i - 1])):
            return i
        e = m.start(2) - 1
        self.add(i, e, "num", read_number(m.group(1)))
        self.add(e, e + 1, "latin", "E")
        sign = "负" if m.group(2) in "-−" and m.group(2) else ""
        self.add(e + 1, m.end(), "num", sign + read_cardinal(m.group(3)))
        return m.end()

    def _r_ieee(self, i: int) -> int:
        """``802.11ax``, ``802.3bt``, ``802.1Q``: IEEE 802 standards, digit by digit."""
        m = _RE_IEEE.match(self.t, i)
        if not m or (i > 0 and _is_digit(self.t[i - 1])):
            return i
        letter_next = m.end() < self.n and is_latin_letter(self.t[m.end()])
        cue = "IEEE" in self.before(i, 6).upper() or self.after(m.end(), 2) in ("标准", "协议")
        if m.group(1) not in ("1", "3", "11", "15", "16") or not (letter_next or cue):
            return i  # 价格802.5元: a price
        self.add(i, m.end(), "num", "八零二点" + read_digits(m.group(1)))
        return m.end()

    def _r_ip_version(self, i: int) -> int:
        m = _RE_IP.match(self.t, i)
        if m and all(int(p) <= 255 for p in m.group().split(".")):
            self.add(i, m.end(), "num", "点".join(read_digits(p) for p in m.group().split(".")))
            prefix = re.match(r"/(\d{1,2})(?![\d.])", self.t[m.end() : m.end() + 4])
            if prefix and int(prefix.group(1)) <= 32:  # 10.0.0.0/8: the prefix length
                self.add(m.end(), m.end() + 1, "num", "斜杠")
                self.add(m.end() + 1, m.end() + prefix.end(), "num", read_cardinal(prefix.group(1)))
                return m.end() + prefix.end()
            port = _RE_PORT.match(self.t, m.end())
            if port:  # 0.0.0.0:80, 127.0.0.1:8000: 冒号, then the port (八十, 八零零零)
                self.add(m.end(), m.end() + 1, "num", "冒号")
                self.add(m.end() + 1, port.end(), "num", _read_port(port.group(1), yao=False))
                return port.end()
            return m.end()
        m = _RE_VERSION.match(self.t, i)
        if m and not _RE_YMD.match(self.t, i):
            self.add(i, m.end(), "num", _read_version(m.group()))
            return m.end()
        return i

    def _r_game_stats(self, i: int) -> int:
        """A kills/deaths/assists score after ``KDA``/``战绩`` (``KDA是12/3/8``): each number
        as a cardinal, the slashes 杠 (十二杠三杠八), as players read it; no date, no fraction."""
        m = _RE_KDA.match(self.t, i)
        if not m or (i and (_is_digit(self.t[i - 1]) or self.t[i - 1] in "./-")):
            return i
        cue = self.before(i, 12).upper()
        if not any(w in cue for w in _KDA_CUES):
            return i
        # KDA是12/3/8, 战绩0-8-3: with slashes or dashes
        parts = m.group().split(m.group(1))
        spoken = "杠".join(read_cardinal(x, liang_bai=False) for x in parts)
        self.add(i, m.end(), "num", spoken)
        return m.end()

    def _r_date(self, i: int) -> int:
        t = self.t
        m = _RE_SLASH_MD_RANGE.match(t, i)
        if (
            m
            and not (i and (_is_digit(t[i - 1]) or t[i - 1] in "./"))
            and _valid_md(int(m.group(1)), int(m.group(2)))
            and _valid_md(int(m.group(3)), int(m.group(4)))
            and (int(m.group(1)), int(m.group(2))) <= (int(m.group(3)), int(m.group(4)))
        ):
            # 活动时间9/1-9/7: two month/day dates joined by a dash, no fractions
            self.add(i, m.end(), "num", _read_md_range(m))
            return m.end()
        m = _RE_DOTTED_YM_RANGE.match(t, i)
        if (
            m
            and not (i and (_is_digit(t[i - 1]) or t[i - 1] == "."))
            and all(1900 <= int(m.group(k)) <= 2100 for k in (1, 3))
            and all(1 <= int(m.group(k)) <= 12 for k in (2, 4))
            and int(m.group(1)) <= int(m.group(3))
            and self.after(m.end(), 1) not in _QUANTITY_NEXT | {"点"}
            and not self.unit_at(m.end())
            and not self.after(m.end(), 3).startswith(_MONEY_WORDS)
        ):
            # 合同期限（2024.1-2026.12）: two dotted year.month dates (a decimal year is no
            # range of decimals anyone writes)
            spoken = (
                _read_year(m.group(1))
                + _read_month_day(m.group(2))
                + "到"
                + _read_year(m.group(3))
                + _read_month_day(m.group(4))
            )
            self.add(i, m.end(), "num", spoken)
            return m.end()
        m = _RE_DOTTED_MD_RANGE.match(t, i)
        if (
            m
            and not (i and (_is_digit(t[i - 1]) or t[i - 1] == "."))
            and _valid_md(int(m.group(1)), int(m.group(2)))
            and _valid_md(int(m.group(3)), int(m.group(4)))
            and (
                any(w in self.before(i, 8) for w in _DATE_RANGE_CUES)
                or t.startswith(_DOTTED_DATE_AFTER, m.end())  # 3.5-3.8举办
            )
        ):
            # 活动时间12.1-12.7: two dotted month.day dates after a word of dates
            self.add(i, m.end(), "num", _read_md_range(m))
            return m.end()
        m = _RE_DOT_EVENT.match(t, i)
        if m and _valid_md(int(m.group(1)), int(m.group(2))) and not (i and t[i - 1] in "·・•"):
            # 9·11事件, 6·18购物节, 3·15晚会: a day named by its date, said digit by digit
            self.add(i, m.end(), "num", read_digits(m.group(1)) + read_digits(m.group(2)))
            return m.end()
        m = _RE_YMD.match(t, i)
        if m and _valid_md(int(m.group(3)), int(m.group(4))):
            spoken = _read_year(m.group(1)) + _read_month_day(m.group(3), m.group(4))
            return self._date_end(i, m.end(), spoken)
        m = _RE_YMD2.match(t, i)
        if m and _valid_md(int(m.group(3)), int(m.group(4))) and not (i and t[i - 1] in "/."):
            # 12/2/2: three slashed parts are a date, year first (the Chinese order)
            spoken = _read_year(m.group(1)) + _read_month_day(m.group(3), m.group(4))
            return self._date_end(i, m.end(), spoken)
        m = _RE_DMY.match(t, i)
        if m:
            a, b = int(m.group(1)), int(m.group(3))
            month, day = (b, a) if a > 12 else (a, b)
            if _valid_md(month, day):
                spoken = _read_year(m.group(4)) + _read_month_day(str(month), str(day))
                return self._date_end(i, m.end(), spoken)
        m = _RE_YM.match(t, i)
        if m and 1 <= int(m.group(3)) <= 12 and 1000 <= int(m.group(1)) <= 2999:
            if m.group(2) != "." or len(m.group(3)) == 2:
                spoken = _read_year(m.group(1)) + _read_month_day(m.group(3))
                self.add(i, m.end(), "num", spoken)
                return m.end()
        m = _RE_MY.match(t, i)
        if m and 1 <= int(m.group(1)) <= 12 and 1000 <= int(m.group(3)) <= 2999:
            self.add(i, m.end(), "num", _read_year(m.group(3)) + _read_month_day(m.group(1)))
            return m.end()
        m = _RE_DOTTED_MD.match(t, i)
        if (
            m
            and not (i > 0 and (_is_digit(t[i - 1]) or t[i - 1] == "."))
            and m.group(1)[0] != "0"
            and m.group(2)[0] != "0"
            and _valid_md(int(m.group(1)), int(m.group(2)))
            and m.group() not in ("11.11", "12.12")
            and t.startswith(_FESTIVAL_AFTER, m.end())
        ):
            # 3.8妇女节, 5.1劳动节, 10.1国庆, 3.15晚会: a day named by its date, as its name is
            # said (三八, 五一, 十一, 三一五), like 3·15 and 6·18
            self.add(i, m.end(), "num", read_cardinal(m.group(1)) + read_digits(m.group(2)))
            return m.end()
        if (
            m
            and not (i > 0 and (_is_digit(t[i - 1]) or t[i - 1] == "."))
            and _valid_md(int(m.group(1)), int(m.group(2)))
            and self._weekday_near(i, m.end())
            and not self.unit_at(m.end())
            and self.after(m.end(), 1) not in _QUANTITY_NEXT
            and not self.liang_next(m.end())
        ):  # 本周六（3.22）: a weekday names the date (周六 3.5公里 stays a distance)
            self.add(i, m.end(), "num", _read_month_day(m.group(1), m.group(2)))
            return m.end()
        m = _RE_MD.match(t, i)
        scheduled = self.before(i, 4).rstrip(" ").endswith(_DOTTED_DATE_BEFORE)
        if (
            m
            and m.group(2) == "."
            and m.group(1)[0] != "0"  # 08.08: no decimal is written with a leading 0
            and not scheduled
            and not self._dotted_date_follows(m.end())
        ):
            m = None  # 10.05元, 涨了10.08%, 共计12.06万: a decimal
        if m and (
            "0" in (m.group(1)[0], m.group(3)[0])
            or self.t.startswith(_DOTTED_DATE_AFTER, m.end())  # 11.11当天, 12.12大促
            or scheduled  # 将于12.20正式发布, 推迟到11.15
        ):
            if _valid_md(int(m.group(1)), int(m.group(3))):
                self.add(i, m.end(), "num", _read_month_day(m.group(1), m.group(3)))
                return m.end()
        return i

    def _slash_date(self, m: re.Match[str], i: int) -> bool:
        """``M/D`` is a date (not a fraction) when the day cannot be a usual denominator (13-31),
        no space is inside, and a date word is next to it: 在/于/从/截至 … before it, or 开始,
        前, 起, 那天, 截止 … after it (``3/15开始放假``; ``1/4决赛`` stays 四分之一). A day 1 is a
        date in any context (``10/1是国庆节`` 十月一日; it was 一分之十)."""
        a, b = m.group(1), m.group(2)
        if " " not in m.group() and _valid_md(int(a), int(b)) and self._weekday_near(i, m.end()):
            return True  # 本周六（3/22）, 3/8（周六）: a weekday names the date, whatever the day
        first = b == "1" and 1 <= int(a) <= 12  # 10/1, 5/1: no fraction has the denominator 1
        if " " in m.group() or not (1 <= int(a) <= 12 and (13 <= int(b) <= 31 or first)):
            return False
        after = self.after(m.end(), 3)
        if after[:1] in ("日", "号"):
            return True
        if (
            after[:1] in _QUANTITY_NEXT
            or after.startswith(("的", "以", "左右"))
            or self.unit_at(m.end())
        ):
            return False
        before = self.before(i, 3).rstrip(" ")
        return first or before.endswith(_SLASH_DATE_BEFORE) or after.startswith(_SLASH_DATE_AFTER)

    def _weekday_near(self, i: int, end: int) -> bool:
        """A weekday (周六, 星期三, 礼拜天) right before ``i`` or right after ``end``, brackets and
        spaces between allowed (``本周六（3/22）``, ``3/8（周六）``, ``周五 3/14``)."""
        before = self.before(i, 6).rstrip(" (（")
        after = self.t[end : end + 6].lstrip(" )）(（")
        return bool(_RE_WEEKDAY_END.search(before) or _RE_WEEKDAY_START.match(after))

    def _dotted_date_follows(self, end: int) -> bool:
        """After ``MM.DD`` (``09.10是教师节``, ``10.01国庆``): a dotted month-day needs a Han
        word after it that is no unit, measure word or money (``10.05元`` is a price), or
        日/号; at the end of a clause it is a decimal (``增长率为10.05``)."""
        nxt = self.after(end, 1)
        if nxt in ("日", "号"):
            return True
        if not (nxt and is_han(nxt)) or nxt in _QUANTITY_NEXT or self.liang_next(end):
            return False
        return not self.after(end, 3).startswith(_MONEY_WORDS) and not self.unit_at(end)

    def _date_end(self, i: int, end: int, spoken: str) -> int:
        # "2024-01-05日" style duplicates are rare; swallow a following 日/号 if present
        if end < self.n and self.t[end] in "日号":
            end += 1
        self.add(i, end, "num", spoken)
        return end

    def _r_time_ratio(self, i: int) -> int:
        t = self.t
        std = _RE_STANDARD_YEAR.match(t, i)
        if std and not (i and _is_digit(t[i - 1])):
            brand = self._brand_before(i)
            if brand is not None and self.brands.get(brand[0].casefold()) == "standard":
                # ISO 9001:2015: a standard's number and its year, both digit by digit with a
                # short pause, as GB/T 7714-2015 (it was a ratio: 九千零一比两千零一十五)
                self.add(i, std.end(1), "num", read_digits(std.group(1)))
                self.add(std.end(1), std.end(1) + 1, "punct", "，")
                self.add(std.start(2), std.end(), "num", read_digits(std.group(2)))
                return std.end()
        lap = _RE_LAP_TIME.match(t, i)
        if (
            lap
            and int(lap.group(2)) < 60
            and not (i > 0 and (_is_digit(t[i - 1]) or t[i - 1] == "."))
            and not (i > 1 and t[i - 1] == ":" and _is_digit(t[i - 2]))
        ):
            # 以1:29.525拿下杆位, 圈速1:32.1: a clock time never has a fraction of a minute, so
            # M:SS.fff is a race or lap time, read as commentators do: 一分二十九秒五二五
            mins, secs, frac = lap.groups()
            spoken = (read_cardinal(str(int(mins)), liang=True) + "分" if int(mins) else "") + (
                read_cardinal(str(int(secs)))
                + "秒"
                + (read_digits(frac) if frac.strip("0") else "")
            )  # 3:26.00: 三分二十六秒 (no 零零 after the seconds)
            self.add(i, lap.end(), "num", spoken)
            return lap.end()
        m = _RE_TIME.match(t, i) or _RE_TIME_SPACED.match(t, i)  # 10 : 30 is a time too
        clause = re.split(r"[，,。；;！？!?]", self.before(i, 6))[-1]  # 比赛开始，10:30比较合适
        score_ctx = any(c in clause for c in _SCORE_CUES) or (
            m is not None and self._sports_score(i, m.end())
        )
        if (
            m
            and score_ctx
            and not any(c in clause for c in _SCORE_CUES[:-1])
            and len(m.group(2)) == 2
            and self._compared_time(i, m.end())
        ):
            # 10:00比9:00好, 会议定在10:00，比9:00晚一点: clock times compared, the one after
            # 比 a time too (it was 九比零, a score)
            score_ctx = False
        if (
            m
            and m.group(3)
            and (
                any(c in self.before(i, 8) for c in _DURATION_TIME_CUES)
                or re.match(r"(?:\.\d+)?的?成绩", t[m.end() : m.end() + 12])
            )
        ):  # 以2:05:30.5的成绩夺冠: a duration too
            # 马拉松成绩2:05:30, 用时1:02:03: a duration, not a clock time
            dh, dm, ds = (int(x) for x in m.groups())
            if dm < 60 and ds < 60:
                parts = [read_cardinal(str(dh), liang=True) + "小时"] if dh else []
                if dm:
                    parts.append(read_cardinal(str(dm)) + "分")
                end = m.end()
                frac = re.match(r"\.(\d{1,6})(?![\d.])", t[end : end + 8])
                if frac:  # 2:05:30.5: the seconds with their fraction
                    parts.append(read_cardinal(str(ds)) + "点" + read_digits(frac.group(1)) + "秒")
                    end += frac.end()
                elif ds or not parts:
                    parts.append(read_cardinal(str(ds)) + "秒")
                self.add(i, end, "num", "".join(parts))
                return end
        if (
            m
            and not m.group(3)
            and int(m.group(2)) < 60
            and any(
                c in re.split(r"[，,。；;]", self.before(i, 8))[-1] for c in _DURATION_TIME_CUES
            )
            and not _AMPM.match(t, m.end())
        ):
            # 视频时长 3:45, 跑步用时 45:30: minutes and seconds, 三分四十五秒
            dm, ds = int(m.group(1)), int(m.group(2))
            spoken = (read_cardinal(str(dm), liang=True) + "分" if dm else "") + (
                read_cardinal(str(ds)) + "秒" if ds or not dm else ""
            )
            self.add(i, m.end(), "num", spoken)
            return m.end()
        if m and not m.group(3) and _RE_RATIO_AFTER.match(t, m.end()):
            score_ctx = True  # 按1:15的粉水比, 1:10的比例: a ratio, not a clock time
        if (
            m
            and not m.group(3)
            and t.startswith(_SPORT_VERBS[:-4], m.end())
            and any(w in self.before(i, 10) for w in _MATCH_WORDS)
        ):
            score_ctx = True  # 羽毛球决赛21:19拿下第一局: a verb of winning right after, a score
        elif (
            m
            and score_ctx
            and not m.group(3)
            and t.startswith(_EVENT_START_WORDS, m.end())
            and self.before(i, 1) != "以"  # 比赛以21:10结束: a score
            and int(m.group(1)) <= 24
            and int(m.group(2)) < 60
        ):
            score_ctx = False  # 比赛10:30开始, 决赛19:35开球: a clock time, not a score
        if m and not score_ctx:
            h, mi = int(m.group(1)), int(m.group(2))
            s = int(m.group(3)) if m.group(3) else None
            if h <= 24 and mi < 60 and (s is None or s < 60):
                end = m.end()
                prefix, issue = "", None
                ap = _AMPM.match(t, end)
                if ap:
                    prefix, issue = self._day_part(ap, i)
                    end = ap.end()
                    if h > 12 and prefix:  # 13:10pm: a 24-hour hour says the half of the day
                        if prefix == "上午":
                            issue = ("ampm-conflict", f"{ap.group(1)!r} after hour {h}; not read")
                        prefix = ""
                spoken = _ampm_hour(prefix, h) + "点"
                if mi or s is not None:  # a time written with seconds reads every field
                    spoken += ("零" if 0 < mi < 10 else "") + read_cardinal(str(mi)) + "分"
                frac = (
                    re.match(r"\.(\d{1,6})(?![\d.])", t[end : end + 8]) if s is not None else None
                )
                if frac and not ap:  # 10:00:00.123: the seconds with their fraction
                    spoken += read_cardinal(str(s)) + "点" + read_digits(frac.group(1)) + "秒"
                    end += frac.end()
                elif s is not None:  # 03:04:05 -> 三点零四分零五秒, as the minutes
                    spoken += ("零" if 0 < s < 10 else "") + read_cardinal(str(s)) + "秒"
                if ap:
                    self._add_ampm_time(i, ap, spoken, issue)
                else:
                    self.add(i, end, "num", spoken)
                return end
        m = _RE_RATIO_CHAIN.match(t, i)
        if m:  # 8:1:1 -> 八比一比一 (a time H:MM:SS was taken above)
            spoken = "比".join(read_cardinal(x) for x in m.group().replace("：", ":").split(":"))
            self.add(i, m.end(), "num", spoken)
            return m.end()
        m = _RE_RATIO.match(t, i)
        if m:
            if (
                m.group(1) == m.group(2) == "1"
                and (
                    self.after(m.end(), 3).lstrip(" ").startswith(_ONE_ON_ONE_NEXT)
                    or self._meeting_arranged(i, m.end())
                )
                and not score_ctx
            ):
                # 1:1沟通, 1:1辅导: one-on-one, 一对一 (1:1还原, 1:1比例 stay 一比一: a scale)
                self.add(i, m.end(), "num", "一对一")
                return m.end()
            spoken = read_number(m.group(1)) + "比" + read_number(m.group(2))
            self.add(i, m.end(), "num", spoken)
            return m.end()
        return i

    def _compared_time(self, i: int, end: int) -> bool:
        """Is the ``H:MM`` from ``i`` to ``end``, with 比 the only score cue before it, a clock
        time compared with another (``10:00比9:00好``)? Yes when a clock time stands right before
        比, when an earlier clock time of the sentence is what it is compared with (``定在10:00，
        比9:00晚一点``), when a day part or 时间 comes right before it (``比伦敦时间13:00``), or when
        a word of earlier, later, better … follows it (``比7:30多睡``). ``甲队比乙队21:15`` stays a
        score."""
        if _RE_TIME_BEFORE_BI.search(self.before(i, 14)):
            return True
        if re.search(r"(?<![\d:])(?:[01]?\d|2[0-4]):[0-5]\d(?![\d:])", self.before(i, 30)):
            return True
        if self.before(i, 4).rstrip(" ").endswith(("时间", *_AM_WORDS, *_PM_WORDS)):
            return True
        return self.after(end, 2).lstrip(" ").startswith(_COMPARED_NEXT)

    def _meeting_arranged(self, i: int, end: int) -> bool:
        """Is the ``1:1`` from ``i`` to ``end`` an arranged meeting (``我和老板约了个1:1``,
        ``下午开个1:1``)? A ratio word after it (``约1:1的比例``) keeps it a ratio."""
        if _RE_RATIO_AFTER.match(self.t, end) or self.after(end, 2).startswith(("兑换", "还原")):
            return False
        before = self.before(i, 8).rstrip(" ")
        if before.endswith(_ONE_ON_ONE_BEFORE):
            return True
        clause = re.split(r"[，,。；;！？!?：:]", before)[-1]
        return (
            before.endswith("约")
            and "比" not in clause
            and any(w in clause for w in ("和", "跟", "与", "找"))  # 和老板约1:1: with someone
            and not self.after(end, 1).strip(" ")[:1].isalnum()  # 约1:1: the clause ends there
        )

    def _r_percent(self, i: int) -> int:
        t = self.t
        m = _RE_PERCENT_RANGE.match(t, i)
        if m:
            spoken = (
                "百分之"
                + read_number(m.group(1), liang_bai=False)
                + "到百分之"
                + read_number(m.group(2), liang_bai=False)
            )
            self.add(i, m.end(), "num", spoken)
            return m.end()
        m = _RE_PERCENT.match(t, i)
        if m:
            word = {"%": "百分之", "‰": "千分之"}.get(t[m.end() - 1], "万分之")
            self.add(i, m.end(), "num", word + read_number(m.group(1), liang_bai=False))
            return m.end()
        return i

    def _r_fraction(self, i: int) -> int:
        d = _RE_DECIMAL_FRACTION.match(self.t, i)
        if d and not (i > 0 and (_is_digit(self.t[i - 1]) or self.t[i - 1] in "./")):
            # 得分9.5/10, 满意度4.5/5: a rating out of a maximum, 十分之九点五 (never 九点五十)
            spoken = read_number(d.group(2)) + "分之" + read_number(d.group(1))
            self.add(i, d.end(), "num", spoken)
            return d.end()
        m = _RE_FRACTION.match(self.t, i)
        if not m or int(m.group(2)) == 0:
            return i
        if m.group().replace(" ", "") in ("985/211", "211/985"):
            # 985/211毕业生: the two university programmes, 九八五、二一一 (no fraction)
            a_, b_ = m.group().replace(" ", "").split("/")
            self.add(i, m.end(), "num", read_digits(a_) + "、" + read_digits(b_))
            return m.end()
        a, b = int(m.group(1)), int(m.group(2))
        if (
            a + b == 100
            and a % 10 == b % 10 == 0
            and (
                self.after(m.end(), 2) in ("分成", "分账", "分配", "分红")
                or self.after(m.end(), 1) == "开"
            )
        ):
            # 50/50分成, 60/40开: shares of a split, said as 五五分成, 六四开
            self.add(i, m.end(), "num", read_digits(str(a // 10) + str(b // 10)))
            return m.end()
        if (
            a >= b
            and a % 5 == b % 5 == 0
            and _is_split([m.group(1), m.group(2)], 100)
            and " " not in m.group()
        ):
            # 按70/30的比例, 50/50: shares of a whole, 七十比三十 (a fraction over 1 is rarely
            # written; it was 三十分之七十)
            self.add(
                i, m.end(), "num", read_cardinal(m.group(1)) + "比" + read_cardinal(m.group(2))
            )
            return m.end()
        if m.group() == "24/7":
            # round the clock: the idiom as written, 二十四七 (the English frontend's "twenty
            # four seven"); it was 二十四乘七, an operator nobody writes or says there
            self.add(i, m.end(), "num", "二十四七")
            return m.end()
        if i > 0 and self.t[i - 1] in "/.":
            return i
        if self._progress_count(i, m):
            return m.end()
        unit = self.unit_at(m.end())
        if unit and unit[0] in _TEMPERATURE_UNITS and " " not in m.group():
            # 气温15/25℃: a forecast's low and high, 十五到二十五摄氏度
            spoken = read_cardinal(m.group(1)) + "到" + read_cardinal(m.group(2)) + _UNITS[unit[0]]
            self.add(i, unit[1], "num", spoken)
            return unit[1]
        if self.after(m.end(), 3).lstrip(" ").startswith("端口") and " " not in m.group():
            # 开放80/443端口: two ports, 八十和四四三
            spoken = _read_port(m.group(1)) + "和" + _read_port(m.group(2))
            self.add(i, m.end(), "num", spoken)
            return m.end()
        if self._slash_date(m, i):  # 在12/25圣诞节那天, 3/15开始放假: month/day
            return self._date_end(i, m.end(), _read_month_day(m.group(1), m.group(2)))
        if "血压" in self.before(i, 6):  # 血压120/80: two pressures, not a fraction
            a_end = i + len(m.group(1))
            self.add(i, a_end, "num", read_cardinal(m.group(1)))
            self.add(a_end, m.end() - len(m.group(2)), "punct", "")
            b_start = m.end() - len(m.group(2))
            unit = self.unit_at(m.end())
            if unit:  # 130/85mmHg: the unit after the second pressure
                self.add(b_start, unit[1], "num", read_cardinal(m.group(2)) + _UNITS[unit[0]])
                return unit[1]
            self.add(b_start, m.end(), "num", read_cardinal(m.group(2)))
            return m.end()
        if (
            unit
            and unit[0] not in _TEMPERATURE_UNITS
            and unit[0].isascii()
            and unit[0] != "mmHg"
            and len(m.group(1)) >= 2
            and len(m.group(2)) >= 2
            and " " not in m.group()
        ):
            # 50/60Hz, 110/220V: two ratings of one device, 五十或六十赫兹 (1/4W stays a fraction)
            spoken = read_cardinal(m.group(1)) + "或" + read_cardinal(m.group(2))
            if unit[0] == "km/h":
                spoken = "每小时" + spoken + "公里"
            else:
                spoken += _UNITS[unit[0]]
            self.add(i, unit[1], "num", spoken)
            return unit[1]
        if (
            unit is None
            and len(m.group(1)) >= 2
            and len(m.group(2)) >= 2
            and " " not in m.group()
            and self._letter_unit_at(m.end())
        ):
            # 7000/6500MB/s, 256/512GB: two sizes or speeds before a letter unit (the letters
            # are read next); 读写 names a read and a write figure: 和, else alternatives: 或
            word = "和" if "读写" in self.before(i, 12) else "或"
            self.add(
                i, m.end(), "num", read_cardinal(m.group(1)) + word + read_cardinal(m.group(2))
            )
            return m.end()
        # "拉齐奥 2/2" style scores are not handled; a fraction is the common reading
        spoken = (
            read_cardinal(m.group(2), liang_bai=False)
            + "分之"
            + read_cardinal(m.group(1), liang_bai=False)
        )
        if unit and unit[0].isascii() and unit[0] not in ("km/h", "w") and " " not in m.group():
            self.add(i, unit[1], "num", spoken + _UNITS[unit[0]])  # 1/4W -> 四分之一瓦
            return unit[1]
        self.add(i, m.end(), "num", spoken)
        return m.end()

    def _r_slash_list(self, i: int) -> int:
        """Three or more integers joined by slashes that no earlier rule took (a date, a game's
        kills/deaths/assists): ``按70/20/10划分`` shares of a whole (adding up to 100) 七十比二十比十,
        other lists with a pause, ``第1/2/3题`` 第一、二、三题 (the slashes were silent and the
        numbers ran together: 七十二十十)."""
        t = self.t
        m = _RE_SLASH_LIST.match(t, i)
        if m is None or (i > 0 and (_is_digit(t[i - 1]) or t[i - 1] in "./")):
            return i
        raw = m.group().split("/")
        parts = [read_cardinal(x, liang_bai=False) for x in raw]
        if raw[:2] == ["24", "7"]:  # 24/7/365: round the clock all year, 二十四七，三百六十五
            self.add(i, i + 4, "num", "二十四七")
            self.add(i + 4, i + 5, "punct", "，")
            self.add(i + 5, m.end(), "num", "、".join(parts[2:]))
            return m.end()
        self.add(i, m.end(), "num", ("比" if _is_split(raw, 100) else "、").join(parts))
        return m.end()

    def _progress_count(self, i: int, m: re.Match[str]) -> bool:
        """``Epoch 3/10``, ``Step 500/1000``, ``第3/10集``: a count out of its total after a word
        of progress, read 三，共十 / 第三集，共十集 (the third of ten), never 十分之三.

        The word before is a Latin progress word (epoch, step, iter, batch, round, episode,
        page, part, stage, trial; one space or none) or 第 (then a measure word after the total
        is said with both numbers: 第三集，共十集), or a word of use or progress (用了, 已用, 占用,
        已完成, 上了 …) with a unit or measure word after the total (``内存用了28/32GB`` 二十八，共
        三十二GB, ``已完成3/5个任务`` 三个，共五个任务; ``用了3/4`` stays 四分之三). The count is at most
        its total. Adds the pieces (the slash a short pause) and says whether it did.
        """
        a, b = m.group(1), m.group(2)
        if int(a) == 0 or int(a) > int(b) or a.startswith("0") or b.startswith("0"):
            return False
        before = self.before(i, 12).rstrip(" ")
        nxt = self.t[m.end() : m.end() + 1]
        if before.endswith("第") and len(before) == len(self.before(i, 12)):
            measure = nxt if nxt in _PROGRESS_MEASURES else ""
        elif (
            before.endswith(_USED_CUES)
            and nxt
            and (nxt in _PROGRESS_MEASURES or is_latin_letter(nxt) or self.unit_at(m.end()))
        ):
            # 内存用了28/32GB, 已完成3/5个任务: so much used or done of a total, 二十八，共三十二GB
            measure = nxt if nxt in _PROGRESS_MEASURES else ""
        else:
            word = re.search(r"([A-Za-z]+)$", before)
            if word is None or word.group(1).lower() not in _PROGRESS_WORDS:
                return False
            if word.end() != len(before) or len(self.before(i, 12)) - len(before) > 1:
                return False
            if word.start() > 0 and not (
                before[word.start() - 1] in " ([" or _is_cjkish(before[word.start() - 1])
            ):
                return False
            measure = ""
        a_end = i + len(a)
        b_start = m.end() - len(b)
        self.add(i, a_end, "num", read_cardinal(a, liang_bai=False) + measure)
        self.add(a_end, b_start, "punct", "，")
        self.add(b_start, m.end(), "num", "共" + read_cardinal(b, liang_bai=False))
        return True

    def _r_version_pair(self, i: int) -> int:
        """``Windows 10/11``, ``iOS 17/18``, ``PCIe 4.0/5.0``: a slash between two ascending
        numbers right after a product name (a Latin word of two or more letters with a
        capital, one space or none between) lists alternatives: 十或十一, as the English
        frontend reads ``Win 10/11`` "ten or eleven". ``比分是3/4`` and ``1/4决赛`` keep the
        fraction (no name before them)."""
        if i > 0 and self.t[i - 1] in "/.":
            return i
        d = _RE_DOTTED_ALTERNATIVES.match(self.t, i)
        if d and not _RE_DECIMAL_FRACTION.fullmatch(d.group()):
            # 版本1.2/1.3, 支持2.1.0/2.2.0: dotted numbers around a slash are versions (or
            # figures) side by side, never a fraction: 一点二或一点三, as Windows 10/11 below
            # (it was 一点二一点三, the slash silent); three or more: 一点二、一点三或一点四
            raw = d.group().split("/")
            parts = [read_number(x) if x.count(".") == 1 else _read_version(x) for x in raw]
            spoken = "、".join(parts[:-1]) + "或" + parts[-1]
            if all(x.count(".") == 1 for x in raw) and _is_split(raw, 1):
                spoken = "比".join(
                    parts
                )  # 按0.8/0.1/0.1划分: shares of a whole, 零点八比零点一比零点一
            unit = self.unit_at(d.end())
            if unit and unit[0].isascii():  # 1.5/2.5kg: the unit after both figures
                self.add(i, unit[1], "num", spoken + _UNITS[unit[0]])
                return unit[1]
            self.add(i, d.end(), "num", spoken)
            return d.end()
        m = _RE_VERSION_PAIR.match(self.t, i)
        if not m:
            return i
        if float(m.group(1)) >= float(m.group(2)):
            return i
        name = self._brand_before(i)
        if name is None or len(name[0]) < 2 or not any(c.isupper() for c in name[0]):
            return i
        if name[0].casefold() in _LABEL_WORDS or name[0].casefold() in ("epoch", "batch", "iter"):
            return i  # Epoch 3/10, Page 2/5: a counter's progress, no alternatives
        spoken = read_number(m.group(1)) + "或" + read_number(m.group(2))
        self.add(i, m.end(), "num", spoken)
        return m.end()

    def _r_range(self, i: int) -> int:
        m = _RE_RANGE.match(self.t, i)
        if not m:
            return i
        a, b = m.group(1), m.group(2)
        end = m.end()
        if end < self.n and _is_digit(self.t[end]):
            return i
        chain = _RE_DIGIT_CHAIN.match(self.t, i)
        if chain and chain.group().count("-") >= 2 and (i == 0 or not _is_digit(self.t[i - 1])):
            # 978-7-111-54742-6 (ISBN, serials): no range, each group digit by digit, the
            # dashes silent
            pos = i
            for part in chain.group().split("-"):
                if pos > i:
                    self.add(pos - 1, pos, "punct", "")
                self.add(pos, pos + len(part), "num", read_digits(part))
                pos += len(part) + 1
            return chain.end()
        if i > 0 and is_latin_letter(self.t[i - 1]):
            return i  # i7-12700K: a model code, not a range
        if self._model_variant(i, a, b, end):
            # 波音737-800, 787-9: a model and its variant, 七三七 八百 (the dash silent)
            self.add(i, i + len(a), "num", read_digits(a))
            self.add(i + len(a), i + len(a) + 1, "punct", "")
            self.add(i + len(a) + 1, end, "num", read_cardinal(b))
            return end
        if (
            "." not in a + b
            and self.before(i, 3).rstrip("(（").endswith(_FIGURE_WORDS)
            and not self.before(i, 3).rstrip("(（").endswith(("试图", "地图", "意图", "列表"))
            and self.after(end, 1) not in ("%", "‰")
        ):
            # 表3-2, 图1-1, 公式(3-1): a chapter-numbered figure, the dash is 杠
            self.add(i, end, "num", read_cardinal(a) + "杠" + read_cardinal(b))
            return end
        if (
            "." not in a + b
            and self.after(end, 1) == "号"
            and int(b) < int(a)
            and re.search(r"[路街道巷弄里村]$", self.before(i, 1))
        ):
            # 人民路108-2号: a house number and its sub-number, 一百零八杠二号 (a range is
            # written low to high: it was 一百零八到二号)
            self.add(i, end, "num", read_cardinal(a) + "杠" + read_cardinal(b))
            return end
        brand = self._brand_before(i)
        mode = self.brands.get(brand[0].casefold()) if brand is not None else None
        if mode == "standard":
            return i  # GB/T 7714-2015: a standard's number and year, not a range
        if mode == "digits" and "." not in a + b:
            self.add(i, end, "num", read_digits(a) + "到" + read_digits(b))  # RTX 3060-3090
            return end
        if i > 1 and self.t[i - 1] == "-" and is_latin_letter(self.t[i - 2]):
            return i  # Llama-2-7B
        if end < self.n and is_latin_letter(self.t[end]) and not self.unit_at(end):
            return i  # 2-7B: the letters make it a code
        unit = self.unit_at(end)
        if self._score_dash(i, end) and "." not in a + b:
            self.add(i, end, "num", read_cardinal(a) + "比" + read_cardinal(b))  # 比分3-1
            return end
        if (
            len(a) == 4
            and len(b) == 2
            and 1000 <= int(a) <= 2999
            and end < self.n
            and is_han(self.t[end])
            and not unit
        ):
            self.add(i, end, "num", read_digits(a) + "到" + read_digits(b))  # 2022-23赛季
            return end
        if (len(b) > 1 and b[0] == "0" and "." not in b) or self.before(i, 6).rstrip(
            " \t\u3000是为:："
        ).endswith(_ID_CUES_WORDS):
            # 编号2024-001, 订单号12-0034: an identifier (a range never has 001), digits, the
            # dash silent
            self.add(i, i + len(a), "num", read_digits(a, yao=True))
            self.add(i + len(a), i + len(a) + 1, "punct", "")
            self.add(i + len(a) + 1, end, "num", read_digits(b, yao=True))
            return end
        if (
            len(a) == len(b) == 4
            and a.isdigit()
            and b.isdigit()
            and 1900 <= int(a) < int(b) <= 2099
            and self.after(end, 2).startswith(_YEAR_NAMED_NEXT)
            and not unit
        ):
            # 2023-2024学年, 2024~2025赛季: two years naming a school year, a season
            self.add(i, end, "num", read_digits(a) + "到" + read_digits(b))
            return end
        ordinal = self.before(i, 2).rstrip(" ").endswith("第")  # 第2-4名: ordinals never take 两
        ra = self._read_plain(a, end, year_ok=True, liang=not ordinal)
        rb = self._read_plain(b, end, year_ok=True, liang=not ordinal)
        spoken = ra + "到" + rb
        if unit:
            if unit[0] == "km/h" and self.before(i, 3).rstrip(" ").endswith("时速"):
                spoken += "公里"  # 时速300-350km/h
            else:
                spoken += "公里每小时" if unit[0] == "km/h" else _UNITS[unit[0]]  # 0-100km/h
            end = unit[1]
        self.add(i, end, "num", spoken)
        return end

    def _model_variant(self, i: int, a: str, b: str, end: int) -> bool:
        """``737-800``, ``波音787-9``, ``A350-900`` (the number after ``A`` is handled as a code):
        a three-digit model number, a dash and a variant (a round hundred or one digit), after
        a ``digits`` brand (波音, Boeing) or of the 7x7 Boeing family, with no unit or measure
        word after it (``价格737-800元`` stays a range)."""
        if "." in a + b or len(a) != 3 or a[1:] == "00" or a[0] == "0":
            return False
        if not ((len(b) == 3 and b[1:] == "00" and b[0] != "0") or (len(b) == 1 and b != "0")):
            return False
        nxt = self.after(end, 1)
        if nxt in _QUANTITY_NEXT or self.unit_at(end) or self.liang_next(end) or nxt in "%‰":
            return False
        if self.after(end, 2) in ("之间", "左右", "以内", "以上", "以下"):
            return False
        brand = self._brand_before(i)
        mode = self.brands.get(brand[0].casefold()) if brand is not None else None
        if mode is None:
            mode = self._han_brand_before(i)
        return mode == "digits" or bool(re.fullmatch(r"7[0-8]7", a))

    def _sports_score(self, i: int, end: int) -> bool:
        """``以6-3、6-4取胜``, ``以21:15先下一城``, ``以3-0横扫``: after 以, with a verb of winning or
        losing later in the clause; or the next pair of a list after a score (``6-3、6-4``)."""
        t = self.t
        ps = self.pieces
        if (
            len(ps) >= 2
            and ps[-1].kind == "punct"
            and ps[-1].spoken in ("、", ",", "，")
            and ps[-1].end == i
            and ps[-2].kind == "num"
            and re.fullmatch(
                r"[零一二三四五六七八九十百]+比[零一二三四五六七八九十百]+", ps[-2].spoken
            )
        ):
            return True
        if not self.before(i, 1) == "以":
            return False
        rest = re.split(r"[，,。；;！？!?]", t[end : end + 16])[0]
        if re.match(r"(?:\.\d+)?的?(成绩|用时|时间|耗时|速度)", rest):
            return False  # 以2:05:30的成绩获胜: a time, not a score
        return any(v in rest for v in _SPORT_VERBS)

    def _score_dash(self, i: int, end: int) -> bool:
        """``比分3-1``, ``以2-1获胜``: a dash between two scores reads 比; so does a descending
        pair between Chinese words (``湖人108-102勇士``: a range is written low to high)."""
        t = self.t
        if self._sports_score(i, end):
            return True
        a_b = t[i:end].split("-")
        plain = (
            len(a_b) == 2
            and all(x.isdigit() and len(x) <= 3 for x in a_b)
            and not (
                self.after(end, 1) in _QUANTITY_NEXT or self.unit_at(end) or self.liang_next(end)
            )
            and not self.after(end, 2).startswith(_RANGE_AFTER_WORDS)
            and self.after(end, 1) not in _RANGE_NEXT_CHARS
            and self.before(i, 1) not in _RANGE_BEFORE_CHARS
        )
        if plain and i > 0 and is_han(t[i - 1]) and int(a_b[0]) > int(a_b[1]):
            return True  # 湖人108-102勇士: a range is written low to high
        if plain and any(w in self.before(i, 10) for w in _DASH_SCORE_CONTEXT):
            return True  # 比赛最终以3-2结束, 半场45-38
        if (
            plain
            and i > 1
            and is_han(t[i - 1])
            and is_han(t[i - 2])
            and end + 1 < self.n
            and is_han(t[end])
            and is_han(t[end + 1])
        ):
            return True  # 勇士102-110湖人: a score between two team names
        if self.before(i, 6).endswith(_DASH_SCORE_BEFORE) or any(
            c in self.before(i, 6) for c in ("比分", "战胜", "击败", "打成")
        ):
            return True
        if self.after(end, 2).startswith(_DASH_SCORE_AFTER):
            return True
        # 中国队3-0日本队, 主队2-1客队: after a team, no unit or measure word after
        nxt = self.after(end, 1)
        return self.before(i, 1) == "队" and not (
            nxt in ("%", "‰", "名", "人", "个") or self.liang_next(end) or self.unit_at(end)
        )

    def _read_plain(
        self, num: str, next_pos: int, *, year_ok: bool = False, liang: bool = True
    ) -> str:
        """Read a number whose following context starts at ``next_pos``."""
        raw = num.replace(",", "")
        if year_ok and len(raw) == 4 and "." not in raw and self.after(next_pos, 1) == "年":
            return read_digits(raw)
        return read_number(raw, liang=liang and self.liang_next(next_pos), liang_bai=liang)

    def _r_number(self, i: int) -> int:
        t = self.t
        m = _RE_NUMBER.match(t, i)
        if not m:
            return i
        num, end = m.group(), m.end()
        raw = num.replace(",", "")
        k = end + 1 if self.after(end, 1) == " " and self.after(end + 1, 1) == "%" else end
        if k != end:  # "50 %": the space changes nothing
            self.add(i, k + 1, "num", "百分之" + read_number(raw, liang_bai=False))
            return k + 1
        cur = _RE_CURRENCY_AFTER.match(t, end)
        if cur and "," not in num[-1:]:
            # 3000 RMB, 500 USD: the currency code after the amount, 三千人民币
            amount = raw.rstrip("0").rstrip(".") if "." in raw else raw
            self.add(i, cur.end(), "num", read_number(amount) + _CURRENCY_PREFIX[cur.group(1)])
            return cur.end()
        mag = _RE_MAGNITUDE_MONEY.match(t, end)
        if mag and len(raw) <= 6:
            # 2.5B美元 -> 二十五亿美元, 300M元: K/M/B before a currency word are a magnitude
            self.add(i, end + 1, "num", read_number(_scaled(raw, _MAGNITUDES[mag.group(1)])))
            return end + 1
        counted = _RE_COUNT_TIMES.match(t, end)
        measure = _product_measure(t[counted.end() : counted.end() + 24]) if counted else None
        if (
            counted
            and measure
            and "." not in raw
            and len(raw) <= 2
            and raw != "0"
            and (counted.group(1) in "x×" or counted.group().startswith(" "))
            and not (i > 0 and (is_latin_letter(t[i - 1]) or t[i - 1] in "x×*"))
        ):
            # 2 x RTX 4090, 8×H100: a count of a product, 两张 RTX 四零九零 (the measure word by the
            # product's kind, data/counted_products.tsv), not 二 X / 二乘 / 两倍
            self.add(i, counted.end(), "num", read_number(raw, liang=True) + measure)
            return counted.end()
        nxt2 = self.after(end, 2)
        if (
            nxt2[:1] in ("x", "×")
            and not (
                nxt2[1:] and ((nxt2[1].isascii() and nxt2[1].isalnum()) or nxt2[1] in _MATH_NEXT)
            )
            and len(raw) <= 4
            and not (nxt2[:1] == "x" and self._in_formula(i))
        ):
            self.add(i, end + 1, "num", read_number(raw, liang=True) + "倍")  # 快了2x -> 两倍
            return end + 1
        code_plus = (
            nxt2[:1] == "+"
            and "." not in raw
            and not (nxt2[1:] and nxt2[1].isascii() and nxt2[1].isalnum())
            and (
                (
                    len(raw) >= 4
                    and (self._brand_before(i) is not None or self._han_brand_before(i) is not None)
                )
                or self._glued_to_letter(i)
            )
        )
        if code_plus:  # Xeon 8480+, P7+, S24+: the plus is part of the model name
            code = self._code_reading(raw, i, end) if len(raw) < 4 else None
            if code is None and self._han_brand_before(i) == "cardinal":
                code = read_cardinal(raw, liang_bai=False)
            self.add(i, end, "num", code or read_digits(raw))
            self.add(end, end + 1, "latin", "plus")
            return end + 1
        if nxt2[:1] == "+" and "." in raw and not (nxt2[1:] and _is_digit(nxt2[1])):
            self.add(i, end + 1, "num", read_number(raw) + "以上")  # Python 3.11+: or later
            return end + 1
        if nxt2[:1] == "+" and not (nxt2[1:] and (_is_digit(nxt2[1]) or nxt2[1] in "+-")):
            value = read_number(raw, liang=self.liang_next(end + 1))
            if set(raw) == {"9"} and len(raw) >= 2:
                # 99+, 999+: a counter's cap (评论999+), said as it shows: 九百九十九加
                self.add(i, end + 1, "num", value + "加")
                return end + 1
            self.add(i, end + 1, "num", value + "多")  # 50+语言 -> 五十多, 10+年 -> 十多年
            return end + 1
        if (
            "." not in raw
            and 5 <= len(raw) <= 8
            and self.after(end, 1) == "万"
            and not self.after(end, 2) == "万亿"
        ):
            # 140967万人 -> 十四亿零九百六十七万人: ten thousand 万 are 亿, as a news reader says it
            self.add(i, end + 1, "num", read_cardinal(raw + "0000", liang=True))
            return end + 1
        unit = self.unit_at(end)
        if unit and len(unit[0]) == 1 and unit[0].isalpha() and self._glued_to_letter(i):
            unit = None  # K8s, M2s: the letter belongs to the code, it is not 秒/米
        if unit:
            u, uend = unit
            reading = _UNITS[u]
            if "." in raw:
                value = read_number(raw)
            else:
                ordinal = self.before(i, 2).rstrip(" ").endswith("第")
                liang = not ordinal and not u.startswith(("°", "℃", "℉"))
                value = read_cardinal(raw, liang=liang, liang_bai=not ordinal)
            if u == "km/h" and self.before(i, 3).rstrip(" ").endswith("时速"):
                spoken = value + "公里"  # 时速350km/h: 时速 already says per hour
            elif u == "km/h":
                spoken = "每小时" + value + "公里"
            elif u == "m" and self._cpu_context(i):
                spoken = value + "毫核"  # Kubernetes cpu: 500m -> 五百毫核 (millicores)
            elif u == "w":
                spoken = value + "万"
            else:
                spoken = value + reading
            self.add(i, uend, "num", spoken)
            return uend
        if (
            "." in raw
            and "," not in num
            and self.before(i, 6).rstrip(" \t\u3000是为:：").endswith(_ID_CUES_WORDS)
        ):
            ip, _, fp = raw.partition(".")
            self.add(i, end, "num", read_digits(ip) + "点" + read_digits(fp))  # 编号2403.12345
            return end
        if "." in raw and "," not in num:
            brand = self._brand_before(i)
            if brand is not None and self.brands.get(brand[0].casefold()) in _DIGIT_MODES:
                ip, _, fp = raw.partition(".")
                self.add(i, end, "num", read_digits(ip) + "点" + read_digits(fp))  # Ubuntu 22.04
                return end
        if "," in num or "." in raw:
            if "." in raw and self.after(end, 3).lstrip(" ").startswith(_MONEY_WORDS):
                ip, _, fp = raw.partition(".")
                raw = ip + ("." + fp.rstrip("0") if fp.rstrip("0") else "")  # 36.00元 -> 三十六元
            self.add(i, end, "num", read_number(raw))
            return end
        ap = _AMPM.match(t, end)
        if ap and 1 <= int(raw) <= 12 and len(raw) <= 2:  # 3pm -> 下午三点, 10am -> 上午十点
            prefix, issue = self._day_part(ap, i)
            self._add_ampm_time(i, ap, _ampm_hour(prefix, int(raw)) + "点", issue)
            return ap.end()
        era = _ERA.match(t, end)
        if era and len(raw) <= 4:  # 2934ad -> 公元二九三四年, 1234b.c. -> 公元前一二三四年
            prefix = "公元前" if era.group(1)[0] in "bB" else "公元"
            self.add(i, era.end(), "num", prefix + read_digits(raw) + "年")
            return era.end()
        if (
            len(raw) <= 2
            and re.match(r"[A-L](?![A-Za-z0-9])", t[end : end + 2])
            and "座" in self.before(i, 6)
        ):
            self.add(i, end, "num", read_cardinal(raw))  # 座位号是32F: row 三十二, seat F
            return end
        if (
            len(raw) == 2
            and i > 1
            and t[i - 1] == "米"
            and _is_digit(t[i - 2])
            and not (end < self.n and (t[end] in "./" or _is_digit(t[end])))
            and not self.unit_at(end)
            and not self.liang_next(end)
            and not self.after(end, 2).startswith(("公分", "厘米", "毫米", "分米"))
        ):
            self.add(i, end, "num", read_digits(raw, yao=False))  # 1米75 -> 一米七五 (cm)
            return end
        code = self._code_reading(raw, i, end)
        if code is not None:
            self.add(i, end, "num", code)
            return end
        self.add(i, end, "num", self._read_integer(raw, i, end))
        return end

    def _cpu_context(self, i: int) -> bool:
        """A Kubernetes CPU quantity: ``cpu``/``CPU``/核 or ``requests``/``limits`` shortly
        before the number (``cpu: 500m``, ``CPU requests设为500m``), so ``m`` is millicores."""
        before = (self.context[-24:] + self.t[max(0, i - 24) : i]).lower()
        return any(w in before for w in ("cpu", "millicore", "核心", "vcpu"))

    def _model_suffix_at(self, j: int) -> bool:
        """Capitals glued after a number that are no unit: a model's suffix (the ``K`` of
        ``i9 13900K``, ``KF``; not the ``mAh`` of ``4500mAh``)."""
        k = j
        while k < self.n and k - j < 3 and self.t[k].isascii() and self.t[k].isupper():
            k += 1
        return k > j and not (k < self.n and is_latin_letter(self.t[k])) and not self.unit_at(j)

    def _after_spaced_code(self, i: int) -> bool:
        """The number at ``i`` follows a code (letters and digits, ending in a digit: ``M.2``,
        ``DDR5``) and one space (or the dash of a memory type: ``DDR5-6400``)."""
        t = self.t
        if i < 3 or t[i - 1] not in " -" or not _is_digit(t[i - 2]):
            return False
        if t[i - 1] == "-" and not _RE_MEMORY_CODE.search(t[max(0, i - 9) : i - 1]):
            return False  # DDR5-6400: a memory type's dash is its space
        k = i - 2
        while k >= 0 and i - k < 16 and (t[k].isascii() and (t[k].isalnum() or t[k] in ".-")):
            k -= 1
        token = t[k + 1 : i - 1]
        return any(is_latin_letter(c) for c in token) and is_latin_letter(token[0])

    def _camera_iso(self, raw: str, i: int) -> bool:
        """``ISO 100``/``ISO 3200`` is a camera's sensitivity (a cardinal) when the value is a
        film speed and the text around is about photography (or the value has at most three
        digits: the standards people cite have four or five, ISO 9001, ISO 27001)."""
        if raw not in _FILM_SPEEDS:
            return False
        if len(raw) <= 3:
            return True
        around = self.t[max(0, i - 24) : i + 24]
        if any(w in around for w in _PHOTO_WORDS):
            return True
        end = i + len(raw)
        if self.t[end : end + 1] in (":", "-") or self.after(end, 6).lstrip(" ").startswith(
            _STANDARD_NEXT
        ):
            return False  # ISO 3200:2015, ISO 1600认证: a standard after all
        # 用ISO 6400, ISO 100到ISO 6400: the doubling steps from 1600 up are no standard
        # people cite, nor is a value next to another film speed of the same sentence
        others = re.findall(r"ISO ?(\d+)", self.context + self.t)
        return raw in _FILM_DOUBLINGS or sum(o in _FILM_SPEEDS for o in others) >= 2

    def _superscript_power(self, i: int) -> int:
        """``10⁹`` -> 十的九次方, ``10⁻⁶`` -> 十的负六次方, ``2¹⁰`` -> 二的十次方 (a lone ² or ³
        after a letter or number keeps 的平方/的立方): after a number, a letter or ``)``."""
        t = self.t
        if i == 0 or not (_is_digit(t[i - 1]) or is_latin_letter(t[i - 1]) or t[i - 1] == ")"):
            return i
        j = i
        sign = ""
        if t[j] in "⁻⁺":
            sign = "负" if t[j] == "⁻" else ""
            j += 1
        k = j
        while k < self.n and t[k] in _SUPERSCRIPT_DIGITS:
            k += 1
        digits = "".join(str(_SUPERSCRIPT_DIGITS.index(c)) for c in t[j:k])
        if not digits or (not sign and digits in ("2", "3") and k - i == 1):
            return i  # x², m³: the square and the cube (_SYMBOLS)
        spoken = "的" + sign + read_cardinal(digits) + "次方"
        per = (
            self.unit_at(k + 1)
            if _is_digit(t[i - 1]) and t[k : k + 1] == "/" and k + 1 < self.n and t[k + 1] != " "
            else None
        )
        if per is not None and per[0] not in ("′", "″"):
            # WBC 12.5×10⁹/L: a count per litre, 十的九次方每升 (the slash was left as written)
            self.add(i, per[1], "num", spoken + "每" + _UNITS[per[0]])
            return per[1]
        unit = self.unit_at(k) if _is_digit(t[i - 1]) else None
        if unit is not None and unit[0] not in ("′", "″"):
            # 3×10⁸m/s: the unit of the amount (it was read as the letter M)
            self.add(i, unit[1], "num", spoken + _UNITS[unit[0]])
            return unit[1]
        self.add(i, k, "num", spoken)
        return k

    def _unit_after_magnitude(self, i: int) -> bool:
        """A unit right after ``<number>万/亿`` (``45亿kWh``, ``3万km``): the unit of the amount."""
        t = self.t
        k = i
        while k > 0 and i - k < 3 and t[k - 1] in "万亿千百":
            k -= 1
        if k == i or k == 0 or not _is_digit(t[k - 1]):
            return False
        unit = self.unit_at(i)
        if unit is not None and unit[0] in _UNIT_CHARS:
            return True
        return (
            unit is not None
            and len(unit[0]) >= 2
            and not (unit[1] < self.n and is_latin_letter(t[unit[1]]))
        )

    def _topic_mark(self, i: int) -> bool:
        """A ``#`` that opens or closes a topic tag with Chinese in it (``#双十一#``)."""
        t = self.t
        after = t.find("#", i + 1, i + 41)
        if after > i + 1 and any(is_han(c) for c in t[i + 1 : after]):
            return True
        if (
            i + 1 < self.n
            and t[i + 1].isascii()
            and t[i + 1].isalpha()
            and (i == 0 or not (t[i - 1].isascii() and t[i - 1].isalnum()))
        ):
            return True  # #OOTD的话题: a hashtag's mark
        if (
            i > 0
            and t[i - 1].isascii()
            and t[i - 1].isalnum()
            and t.rfind("#", max(0, i - 31), i) != -1
        ):
            k = t.rfind("#", max(0, i - 31), i)
            if t[k + 1 : i].isascii() and t[k + 1 : i].isalnum():
                return True  # #MWC2026#: the closing mark
        before = t.rfind("#", max(0, i - 40), i)
        return before != -1 and any(is_han(c) for c in t[before + 1 : i])

    def _menu_step(self, i: int) -> bool:
        """``File > Settings > Editor``, ``设置→通用``: an arrow between two capitalised words
        (or Han words, for →) is a step in a menu path, no comparison (``x > 0``)."""
        t = self.t
        a = i - 1
        while a >= 0 and t[a] == " ":
            a -= 1
        b = i + 1
        while b < self.n and t[b] == " ":
            b += 1
        if a < 0 or b >= self.n:
            return False
        if t[i] == "→" and is_han(t[a]) and is_han(t[b]):
            return True
        k = a
        while k >= 0 and is_latin_letter(t[k]):
            k -= 1
        left = t[k + 1 : a + 1]
        e = b
        while e < self.n and is_latin_letter(t[e]):
            e += 1
        right = t[b:e]
        return len(left) >= 2 and len(right) >= 2 and left[0].isupper() and right[0].isupper()

    def _in_formula(self, i: int) -> bool:
        """The number at ``i`` is a coefficient in a formula (``x²+2x+1=0``, ``y=3x``): an
        operator or ``=`` right before it."""
        k = i - 1
        while k >= 0 and self.t[k] == " ":
            k -= 1
        return k >= 0 and self.t[k] in "+-−=<>*/(≤≥≈"

    def _day_part(self, ap: re.Match[str], start: int) -> tuple[str, tuple[str, str] | None]:
        """The 上午/下午 that am/pm adds to a time at ``start``, and an issue if any.

        "" where a day-part word is written right before the time or right after the am/pm
        (``下午3:30 PM``, ``3pm下午``): the written word is kept and not said twice. A written
        word that contradicts the am/pm (``上午3点PM``) wins too (the writer's Chinese word is
        the likelier), and the issue returned makes the caller warn on the am/pm letters."""
        am = ap.group(1)[0] in "aA"
        before = self.before(start, 3).rstrip(" ")
        after = self.t[ap.end() : ap.end() + 3].lstrip(" ")
        for word in _AM_WORDS + _PM_WORDS:
            if before.endswith(word) or after.startswith(word):
                if (word in _AM_WORDS) != am:
                    return "", ("ampm-conflict", f"{ap.group(1)!r} contradicts {word}; read {word}")
                return "", None
        prev = re.search(
            r"(a\.m\.|p\.m\.|am|pm|AM|PM|A\.M\.|P\.M\.) ?[-~～—–到至] ?$", self.before(start, 8)
        )
        if prev and (prev.group(1)[0] in "aA") == am:
            # 上午9am-11am, 9am-11am: the second time of a range shares the first one's day part
            if re.search(r"\d ?$", self.before(start - len(prev.group()), 2)):
                return "", None
        return ("上午" if am else "下午"), None

    def _add_ampm_time(
        self, i: int, ap: re.Match[str], spoken: str, issue: tuple[str, str] | None
    ) -> None:
        """The time ``[i, ap.end())``; with an issue the am/pm letters are a warned skip."""
        if issue is None:
            self.add(i, ap.end(), "num", spoken)
        else:
            self.add(i, ap.start(1), "num", spoken)
            self.add(ap.start(1), ap.end(), "skip", "", issue)

    def _ampm_after_han_time(self, i: int) -> bool:
        """``3点4分5秒am``: am/pm after a time written with 点/分/秒 becomes its 上午/下午 prefix,
        as after ``3:04am`` (the letters themselves say nothing more)."""
        ap = _AMPM.match(self.t, i)
        if not ap or ap.start(1) != i:
            return False
        ps = self.pieces
        k = len(ps)
        first = None
        pos = i
        while k > 0 and ps[k - 1].end == pos and ps[k - 1].kind in ("num", "han"):
            p = ps[k - 1]
            if p.kind == "han" and not set(p.spoken) <= _HAN_TIME_CHARS:
                break
            if p.kind == "num":
                first = k - 1
            pos = p.start
            k -= 1
        if first is None or not any(p.kind == "han" and "点" in p.spoken for p in ps[first:]):
            return False
        prefix, issue = self._day_part(ap, ps[first].start)  # 下午3点pm: said already
        p = ps[first]
        ps[first] = Piece(p.start, p.end, p.kind, prefix + p.spoken, p.issue)
        self.add(i, ap.end(), "skip" if issue else "punct", "", issue)
        self._era_end = ap.end()
        return True

    def _letters_per_time(self, j: int) -> bool:
        """Letters at ``j`` (up to eight) right before ``/`` and a time unit: the unit of a rate
        (``MT/s``, ``GT/s``, ``tokens/s``)."""
        k = j
        while k < self.n and k - j < 8 and is_latin_letter(self.t[k]):
            k += 1
        return k > j and self.t[k : k + 1] == "/" and self._rate_unit(k + 1) is not None

    def _rate_unit(self, j: int) -> tuple[str, int] | None:
        """A time unit at ``j`` ending a rate (``tokens/s``), with its end, or ``None``."""
        k = j
        while k < self.n and k - j < 4 and is_latin_letter(self.t[k]):
            k += 1
        u = self.t[j:k]
        return (u, k) if u in _RATE_UNITS and not (k < self.n and _is_digit(self.t[k])) else None

    def _glued_to_letter(self, i: int) -> bool:
        """The number at ``i`` follows a Latin letter directly (the digits of a code: ``K8s``),
        and those letters are not the unit of a number before them (``5V2A``)."""
        k = i
        while k > 0 and i - k < 8 and is_latin_letter(self.t[k - 1]):
            k -= 1
        return k < i and not (k > 0 and _is_digit(self.t[k - 1]))

    def _read_integer(self, raw: str, i: int, end: int) -> str:
        """The context rules for a bare integer (see CONVENTIONS.md)."""
        prev = self.before(i, 7).rstrip(" ")  # "第 2 名": spaces around numbers change nothing
        if self.after(end, 1) == " " and is_han(self.after(end + 1, 1) or " "):
            end += 1  # "2024 年 3 月" (spaces around numbers, as tech writing does)
        nxt = self.after(end, 3)
        nxt1 = nxt[:1]
        if (
            len(raw) == 8
            and 1900 <= int(raw[:4]) <= 2099
            and _valid_md(int(raw[4:6]), int(raw[6:]))
            and prev.rstrip(" :：是为").endswith(_DATE_WORDS)
        ):
            # 生产日期：20241115: a date written without separators, 二零二四年十一月十五日
            return _read_year(raw[:4]) + _read_month_day(raw[4:6], raw[6:])
        if len(raw) == 2 and nxt.startswith("财年"):
            return read_digits(
                raw
            )  # 24财年: a fiscal year written short, 二四财年 (as 86年 八六年)
        if nxt1 and nxt1 in "月日号" and len(raw) <= 2:
            return read_cardinal(raw)  # 08月 -> 八月
        if len(raw) > 1 and raw[0] == "0":
            return read_digits(raw)  # 007, 05年, 0571
        if self.t[i - 2 : i] == "**" or self.t[end : end + 2] == "**":
            return read_digits(raw, yao=True)  # 138****8000: a masked number
        if len(raw) == 2 and i > 1 and self.t[i - 1] in "'’" and is_latin_letter(self.t[i - 2]):
            return read_digits(raw)  # ICLR'24, Summer '25: a year written with two digits
        if (
            raw in _SLANG_NUMBERS
            and (
                bool(_SLANG_NUMBERS[raw])
                and self.t.startswith(_SLANG_NUMBERS[raw], end)
                or (
                    (
                        not _SLANG_NUMBERS[raw]
                        or prev.endswith(_SLANG_BEFORE.get(raw, ()) or ("\0",))
                    )
                    and nxt1 not in _QUANTITY_NEXT
                    and not self.liang_next(end)
                    and not self.unit_at(end)
                )
            )
            and (not prev.endswith(_COUNT_BEFORE) or self._working_hours(raw, i, end))
        ):  # a word of the table after it (618期间) wins over the measure word 期
            return read_digits(raw)  # 这波操作666, 996工作制, 520那天: said digit by digit
        if prev.endswith("第"):
            return read_cardinal(raw, liang_bai=False)  # 第二百: ordinals never take 两
        if prev.rstrip(" ").lower().endswith("no.") and len(raw) >= 3:
            return read_digits(raw)  # No.12345 -> 一二三四五
        if nxt1 == "年" and prev.endswith(("公元", "公元前", "纪元", "西元")):
            return read_digits(raw)
        if nxt1 == "年" and len(raw) == 4:
            return read_digits(raw)
        if (
            len(raw) == 4
            and 1900 <= int(raw) <= 2099
            and self.after(end, 2).startswith(_YEAR_NAMED_NEXT)
        ):
            # 2024届, 2025款, 2024赛季: a year naming a class, model, season
            return read_digits(raw)
        if (
            len(raw) == 4
            and 1950 <= int(raw) <= 2035
            and raw[2:] != "00"  # 在2000到3000之间: a round figure is an amount
            and not self.liang_next(end)
            and not self.unit_at(end)
            and (
                nxt.startswith(_BARE_YEAR_AFTER)
                or (prev.endswith(_BARE_YEAR_BEFORE) and nxt1 not in _QUANTITY_NEXT)
            )
        ):
            return read_digits(raw)  # 他在2024考上了大学, 2025来了, 从2019到2023: a year
        if len(raw) == 4 and 1900 <= int(raw) <= 2099 and _RE_HALF_QUARTER.match(self.t, end):
            return read_digits(raw)  # 2024 H2, 2025 Q1: a year and its half or quarter
        if (
            len(raw) == 4
            and self.before(i, 1) in ("〔", "[", "［")
            and self.after(end, 1) in "〕]］"
        ):
            return read_digits(raw)  # 国发〔2024〕5号: the year of a document number
        if (
            len(raw) == 4
            and 1900 <= int(raw) <= 2099
            and self.before(i, 1) in ("(", "（")
            and self.after(end, 1) in (")", "）")
            and (
                self.before(i - 1, 1) in ("》", "”", '"', "」")
                or is_latin_letter(self.before(i - 1, 2).rstrip(" ")[-1:] or "0")
            )
        ):
            return read_digits(raw)  # 《流浪地球》（2019）, Endgame (2019): a work's year
        if nxt1 == "年" and len(raw) == 2 and self._short_year(prev, end, raw[0] in "56789"):
            return read_digits(raw)  # 86年出生 -> 八六年
        if nxt1 == "后" and len(raw) == 2 and raw[1] in "05":
            return read_digits(raw)  # 80后, 90后, 95后
        if (
            len(raw) == 3
            and raw[0] in "12345"
            and (
                any(cue in prev for cue in _STATUS_CUES)
                or prev.endswith(("报", "出现", "显示", "提示", "抛出"))  # 页面报404
                or self.before(i, 12).rstrip(" ").casefold().endswith("error code")
                or (self.t.startswith(_STATUS_AFTER, end) and nxt != "错误率")
            )
            and nxt1 not in _QUANTITY_NEXT
            and not self.liang_next(end)
        ):
            return read_digits(raw)  # 返回了一个403, 报502: an HTTP status code
        if prev.endswith(("转", "分机")) and len(prev) >= 2 and _is_digit(prev[-2]):
            return read_digits(raw, yao=True)  # 021-62345678转801: an extension
        if len(raw) >= 2 and nxt.startswith(("端口", "号端口")):
            return _read_port(raw)  # 8000端口 -> 八零零零, as 端口8000; 80端口 八十
        if (
            len(raw) in (2, 3)
            and self.before(i, 1) == "秒"
            and i > 1
            and _is_digit(self.t[i - 2])
            and nxt1 not in _QUANTITY_NEXT
            and not self.after(end, 2).startswith(("毫", "微", "纳"))
            and not self.unit_at(end)
            and not self.liang_next(end)
        ):
            return read_digits(raw)  # 9秒83, 1分29秒525: a fraction of a second, 九秒八三
        if len(raw) == 3 and (
            self.after(end, 2) in _ROAD_WORDS or self.before(i, 3).rstrip(" ").endswith(_ROAD_WORDS)
        ):
            return read_digits(raw)  # 318国道, 国道318: a national road's number, 三一八
        if 3 <= len(raw) <= 4 and self.after(end, 4).startswith(_ROOM_NEXT):
            return read_digits(raw, yao=True)  # 302会议室, 1203房间: room numbers
        if (
            3 <= len(raw) <= 4
            and self.after(end, 1) == "房"
            and (
                prev.endswith(("栋", "座", "幢", "楼", "单元", "号"))
                or not is_han(self.after(end + 1, 1) or " ")
            )
        ):
            return read_digits(raw, yao=True)  # 2栋1803房, 住1803房。: a room (not 300房源)
        if (
            len(raw) == 2
            and raw[1] != "0"
            and self.after(end, 1) == "折"
            and not self.after(end, 2).startswith(_ZHE_VERBS)
        ):
            return read_digits(raw)  # 95折, 88折: a discount, 九五折 (打95折 too)
        if (
            3 <= len(raw) <= 4
            and any(
                prev.endswith(w)
                and (
                    _is_digit(prev[: -len(w)][-1:] or " ")
                    or (prev[: -len(w)][-1:].isascii() and prev[: -len(w)][-1:].isupper())
                )
                for w in _ADDRESS_BEFORE_ROOM
            )
            and nxt1 not in _QUANTITY_NEXT
            and not self.liang_next(end)
        ):
            return read_digits(raw, yao=True)  # 3号楼2单元501, A栋1201: the flat's number
        if raw in _SERVICE_NUMBERS and (
            nxt.startswith(_EMERGENCY_NEXT)
            or (
                prev.endswith(_SERVICE_CALL_BEFORE)
                and nxt1 not in _QUANTITY_NEXT
                and not self.liang_next(end)
            )
        ):
            return read_digits(raw, yao=True)  # 110报警, 120急救车, 有事找110, 投诉就找12315
        if re.search(
            r"[前后末尾][0-9一二三四五六七八九十]{1,2}位[是为:：]?$", prev
        ) and not self.liang_next(end):
            return read_digits(raw, yao=True)  # 身份证号后四位是1234: digits of an identifier
        cue = prev.rstrip(" \t\u3000是为:：")
        cue = cue[:-1].rstrip(" \t\u3000") if cue.endswith("从") else cue  # 端口从5432改成…
        inside_word = any(  # RAID 1, support 2: "ID", "port" ending a longer Latin word
            c.isascii() and cue.endswith(c) and is_latin_letter(cue[-len(c) - 1 : -len(c)] or " ")
            for c in _ID_CUES
        )
        if cue.endswith(_ID_CUES) and not self.liang_next(end) and not inside_word:
            if cue.endswith(("端口", "端口号", "port")):
                return _read_port(raw)  # 端口22 -> 二十二, 端口8080 -> 八零八零
            return read_digits(raw, yao=True)
        linked = self.before(i, 20).rstrip(" \t\u3000:：")
        linked = linked[:-1] if linked.endswith("了") else linked  # 改成了5433
        for verb in _LINK_VERBS:
            if linked.endswith(verb):
                linked = linked[: -len(verb)].rstrip(" \t\u3000")
                # 端口从5432改成5433: the old value between the cue and the verb
                linked = re.sub(r"从\s*[0-9]+\s*$", "", linked)
                if linked.endswith(_ID_CUES_WORDS) and not self.liang_next(end):
                    if linked.endswith(("端口", "端口号", "port")):
                        return _read_port(raw)  # 端口改成8443 -> 八四四三
                    return read_digits(raw, yao=True)  # 端口改成8443, 工号填写为10086
                break
        if (
            len(raw) >= 11
            and raw.count("0") * 2 < len(raw)  # round amounts (11000000000) stay cardinals
            and nxt1 not in _QUANTITY_NEXT
            and not self.liang_next(end)
        ):
            return read_digits(raw, yao=True)  # card, account and ID numbers (11+ digits)
        if len(raw) >= 5 and nxt1 and is_han(nxt1) and nxt1 not in _QUANTITY_NEXT:
            round_amount = len(raw.rstrip("0")) <= 2  # 50000, 150000: an amount, not a code
            if not self.liang_next(end) and not round_amount and not prev.endswith(_AMOUNT_BEFORE):
                return read_digits(raw, yao=True)  # 拨打12306来咨询
        counted = i > 0 and (
            self.t[i - 1] in "有建了这那共约第几每各新两盖座栋另仅只剩近超余"
            or self.before(i, 2) in ("其中", "当中", "其余", "另外", "总共", "一共", "合计", "共计")
        )  # 其中2栋是商住两用, 共有2栋: a count of buildings, 两栋
        if (
            len(raw) <= 2
            and nxt1 in "座栋幢"
            and not counted
            and (i == 0 or not (self.t[i - 1].isascii() and self.t[i - 1].isalnum()))
            and re.match(
                r"[座栋幢](?:\d{1,2}(?:单元|号楼|楼(?![高的]))|\d{3,4}(?!\d))",
                self.t[end : end + 8],
            )
        ):
            return read_cardinal(raw)  # 2栋1单元, 2栋1803房: a building and its unit or flat, 二栋
        if len(raw) <= 2 and nxt1 in "栋幢" and not counted and self._building_label(i, end):
            return read_cardinal(raw)  # 我住1栋，2栋是新盖的: building 2, 二栋
        if (
            len(raw) <= 2
            and (nxt1 in "座栋幢" or nxt.startswith(("号楼", "单元")))
            and i > 0
            and is_han(self.t[i - 1])
            and not counted
            and any(w in self.before(i, 20) for w in _ADDRESS_WORDS)
        ):
            return read_cardinal(raw)  # 太古汇2座2306室: a building's number in an address, 二座
        if (
            re.fullmatch(r"[1-5]0[5-9]0", raw)
            and (
                self.before(i, 2).rstrip(" ").endswith(("张", "块", "卡")) or nxt.startswith("显卡")
            )
            and nxt1 not in _QUANTITY_NEXT
            and not self.liang_next(end)
        ):
            return read_digits(raw)  # 一张4090, 单卡4090, 4090显卡: a graphics card's number
        label = self._brand_before(i)
        if label is not None and not label[1] and label[0].casefold() in _LABEL_WORDS:
            if len(raw) in (3, 4) and label[0].casefold() in ("room", "gate", "line"):
                return read_digits(raw)  # Room 302: 三零二
            return read_cardinal(
                raw, liang_bai=False
            )  # Round 2面试, Step 2: a numbered label, no 两
        # 200号, 200路, 200期: a number that names (a house, a bus route, an issue) says 二百
        naming = nxt1 in _NAMING_NEXT or nxt.startswith("分之")  # 200分之1: a fraction, 二
        return read_cardinal(raw, liang=self.liang_next(end), liang_bai=not naming)

    def _short_year(self, prev: str, end: int, default: bool) -> bool:
        """Is a 2-digit number before 年 (at ``end``) a year (八六年) or a count (三十年)?

        Cues decide (在19年, 20年3月, 18年底 / 工作了30年, 30年前, 50年代); without one,
        ``default`` (50年-99年 are more often years: NeMo reads 50年 五零年).
        """
        after = self.after(end + 1, 4)
        if after.startswith(_DURATION_AFTER) or prev.endswith(_DURATION_BEFORE):
            return False
        if after.startswith("代"):
            return False
        if after[:1] and _is_digit(after[0]) and "月" in after:
            return True
        if prev.endswith(_YEAR_BEFORE) or after.startswith(_YEAR_AFTER):
            return True
        return default

    def _brand_before(self, i: int) -> tuple[str, bool] | None:
        """The Latin word (with ``-+#``) right before ``i``, and whether it is glued to it."""
        t = self.t
        k = i
        glued = True
        if k > 0 and t[k - 1] == " ":
            k -= 1
            glued = False
        j = k
        while (
            j > 0
            and k - j < 24
            and (
                is_latin_letter(t[j - 1])
                or t[j - 1] in "-+#"
                or (
                    t[j - 1] == "/"
                    and j > 1
                    and is_latin_letter(t[j - 2])
                    and is_latin_letter(t[j])
                )
            )
        ):
            j -= 1
        word = t[j:k].strip("-")
        if not word or not any(is_latin_letter(c) for c in word):
            return None
        if word in ("x", "X") and (
            (j > 0 and _is_digit(t[j - 1])) or (j > 1 and t[j - 1] == " " and _is_digit(t[j - 2]))
        ):
            return None  # 1920x1080, 1920 x 1080: a dimension, not a code
        return word, glued

    def _han_brand_before(self, i: int) -> str | None:
        """The mode of a Chinese brand name glued before ``i`` (``波音737``), if the table has
        one (keys of one to four Han characters)."""
        for k in range(min(4, i), 0, -1):
            word = self.t[i - k : i]
            if is_han(word[0]):
                mode = self.brands.get(word)
                if mode is not None:
                    return mode
        return None

    def _mask_rating(self, letters: str, raw: str, i: int, end: int) -> bool:
        """A respirator's filter class (``N95``, ``KN95``, ``KF94``, ``N99``): said digit by
        digit (N九五, as in 戴N95口罩), not as the number (N九十五). ``KN``/``KF``/``KP`` are
        only mask classes; a bare ``N``/``P``/``R`` (Intel's ``N95``/``N100`` chips) needs a
        word of masks or protection in the sentence."""
        if len(raw) != 2 or raw[0] not in "89" or end < self.n and _is_digit(self.t[end]):
            return False
        up = letters.upper()
        if up in ("KN", "KF", "KP"):
            return True
        if up not in ("N", "P", "R"):
            return False
        near = self.before(i, 16) + self.t[end : end + 16]
        return any(w in near for w in _MASK_WORDS)

    def _stock_code(self, raw: str, i: int, end: int) -> bool:
        """A stock code: six digits (five for Hong Kong) before an exchange suffix (``600519.SH``,
        ``300750.SZ``, ``00700.HK``), or six digits that are no round number alone in brackets
        after a name in a sentence about shares (``贵州茅台（600519）涨停``)."""
        t = self.t
        if not raw.isdigit() or len(raw) not in (5, 6):
            return False
        if _RE_EXCHANGE.match(t, end):
            return True
        return (
            len(raw) == 6
            and not raw.endswith("000")
            and i > 1
            and t[i - 1] in "(（"
            and is_han(t[i - 2])
            and t[end : end + 1] in (")", "）")
            and any(w in self.context + t for w in _STOCK_WORDS)
        )

    def _code_reading(self, raw: str, i: int, end: int) -> str | None:
        """Digits inside a product or model code, or ``None`` when the number is no code.

        ``RTX 4070`` -> 四零七零 (``data/brands.tsv``), ``A100`` -> 一百, ``H200`` -> 二百,
        ``1080p`` -> 一零八零, ``12700K`` (after ``i7-``) -> 一二七零零; see CONVENTIONS.md.
        """
        t = self.t
        after = t[end] if end < self.n else ""
        if self._letters_per_time(end):
            # 6000MT/s, DDR5 6400MT/s, 16GT/s: letters that a rate's time unit follows are a
            # unit (transfers per second), so the number is an amount: 六千 M T 每秒 (it was
            # 六零零零, a model code)
            return None
        if (
            len(raw) == 2
            and raw.isdigit()
            and 80 <= int(raw) <= 99
            and self.after(end, 1) == "新"
            and not self.after(end, 2).endswith(tuple("闻年人品款高低增建版型一"))
        ):
            return read_digits(raw)  # 99新, 95新: a used item's condition, 九九新 (not 九十九)
        if raw in ("985", "211") and (
            self.after(end, 2) in _UNIVERSITY_NEXT
            or (self.after(end, 1) in "/、和与" and self.after(end + 1, 3) in ("985", "211"))
        ):
            return read_digits(raw)  # 985高校, 211大学: the university programmes, 九八五, 二一一
        if self._stock_code(raw, i, end):
            return read_digits(raw)  # 贵州茅台（600519.SH）: a stock code, 六零零五一九
        if (
            raw.isdigit()
            and i > 0
            and t[i - 1] == "K"
            and not (i > 1 and is_latin_letter(t[i - 2]))
            and (self.after(end, 1) in ("+", "处") or self.after(end, 2) == "公里")
            and any(w in self.before(i, 14) for w in _ROAD_CONTEXT)
        ):
            return read_cardinal(raw)  # 沈海高速K108处: a kilometre post, K 一百零八
        if (
            len(raw) == 4
            and raw.isdigit()
            and 1900 <= int(raw) <= 2099
            and t.rfind("《", 0, i) > t.rfind("》", 0, i)
            and "》" in t[end : end + 20]
            and not (self.after(end, 1) in _QUANTITY_NEXT or self.liang_next(end))
            and not self.unit_at(end)
        ):
            return read_digits(raw)  # 《我的2024》, 《2001太空漫游》: a year in a title
        if (
            "." not in raw
            and _RE_LAST_DIGITS.search(self.before(i, 7).rstrip(" "))
            and not self.liang_next(end)
        ):
            return read_digits(raw, yao=True)  # 身份证号码后六位是03251X: an identifier's digits
        k = i - 1 if i > 1 and t[i - 1] == "-" and is_latin_letter(t[i - 2]) else i
        while k > 0 and i - k < 5 and t[k - 1].isascii() and t[k - 1].isupper():
            k -= 1
        if (
            k < i
            and "." not in raw
            and self.before(k, 6).rstrip(" 是为:：").endswith(_ERROR_CODE_CUES)
        ):
            return read_digits(raw)  # 错误代码E-402, 故障码P0420: a code's digits, 四零二
        if i > 1 and t[i - 1] in "·・•" and is_latin_letter(t[i - 2]) and len(raw) >= 3:
            return read_digits(raw)  # 沪A·88888: a licence plate
        k = i
        while k > 0 and i - k < 4 and t[k - 1].isascii() and t[k - 1].isupper():
            k -= 1
        secret = re.search(
            r"(?:密码|口令|账号|帐号|用户名)[是为:：]? ?[A-Za-z0-9_@.#-]*$", self.before(i, 30)
        )
        if (
            len(raw) >= 4
            and "." not in raw
            and secret
            and secret.group().rstrip(" ")[-1:] in "@_#-"
        ):
            # 密码是Abc@12345, 账号user_2024: the digits of a secret or an account name after
            # its joiner, one by one (it was 一万两千三百四十五)
            return read_digits(raw, yao=True)
        if len(raw) >= 4 and "." not in raw and not (k > 0 and is_latin_letter(t[k - 1])):
            cue = self.before(k, 8).rstrip(" \t\u3000是为:：")
            named = cue.endswith(("号", "码")) and len(cue) >= 2 and is_han(cue[-2])
            if (cue.endswith(_ID_CUES_WORDS) or named) and not cue.endswith(
                ("型号", "端口", "端口号", "错误码", "状态码", "返回码", "代码", "编码")
            ):  # a code of a kind (错误码E1003) is said with 一, as its number is
                # 运单号是YT7523186490213, 航班号MU5101, 身份证号码：…002X: an identifier with a
                # letter before or after its digits, 幺 for 1
                return read_digits(raw, yao=True)
        if (
            len(raw) == 4
            and raw[0] != "0"
            and raw[1:] == "000"
            and (self._brand_before(i) is not None or self._han_brand_before(i) is not None)
        ):
            return read_cardinal(raw)  # WH-1000XM5, 麒麟9000S, ISO 9000: a round thousand, 一千
        if (
            len(raw) >= 3
            and i > 1
            and t[i - 1] == "."
            and is_latin_letter(t[i - 2])
            and not (i > 2 and is_latin_letter(t[i - 3]))
        ):
            return read_digits(raw)  # H.264, H.265: the codec's number (H 点二六四)
        noun_next = self.after(end + 1 if self.after(end, 1) == " " else end, 4).startswith(
            _MEASURE_LED_NOUNS
        )
        if (
            # DDR5 6000 is 六千 (a round thousand is said as a number); DDR5 6400, DDR4 3200
            # 六四零零, 三二零零 (a memory speed: digits, blind session 6 leftover)
            ((len(raw) == 4 and raw[1:] != "000") or (len(raw) == 5 and raw[2:] != "000"))
            and self._after_spaced_code(i)
            and (noun_next or not self.liang_next(end) or self._model_suffix_at(end))
        ):
            nxt = self.after(end + 1 if self.after(end, 1) == " " else end, 1)
            if noun_next or nxt not in _QUANTITY_NEXT:
                return read_digits(raw)  # M.2 2280, i9 13900K: a spec after a code
        if raw.isdigit() and len(raw) in (4, 5) and raw[-3:] == "000" and i > 0 and t[i - 1] == "-":
            if self._after_spaced_code(i):
                return read_cardinal(raw)  # DDR5-6000: 六千, as DDR5 6000
        brand = self._brand_before(i)
        resolution = raw in ("240", "360", "480", "576", "720", "1080", "1440", "2160", "4320")
        if (
            resolution
            and after
            and after in "pPi"
            and not is_latin_letter(self.after(end + 1, 1) or " ")
        ):
            return read_digits(raw)  # 1080p: 一零八零 P
        suffix_j = end
        while suffix_j < self.n and is_latin_letter(t[suffix_j]):
            suffix_j += 1
        suffix = t[end:suffix_j]
        after_code_dash = (
            i >= 2 and t[i - 1] == "-" and (_is_digit(t[i - 2]) or is_latin_letter(t[i - 2]))
        )
        if after_code_dash and len(raw) > 1 and raw[0] == "0" and "." not in raw:
            return read_digits(raw)  # ORD-20240101-001: a zero-led serial, 零零一
        if (
            suffix in ("x", "X")
            and suffix_j < self.n
            and _is_digit(t[suffix_j])
            and not self.code_letter_after(suffix_j)
        ):
            return None  # 1920X1080: a dimension (乘), not a code
        if (
            len(suffix) == 1
            and suffix.isupper()
            and suffix_j < self.n
            and _is_digit(t[suffix_j])
            and not (i > 0 and _is_digit(t[i - 1]))
        ):
            return read_digits(raw)  # 23H2, 2A3: digits on both sides of a letter
        if brand is None and not after_code_dash:
            han_mode = self._han_brand_before(i)
            if han_mode == "digits" and "." not in raw:
                return read_digits(raw)  # 波音737 -> 七三七
            if han_mode == "cardinal":
                return read_cardinal(raw, liang_bai=False)
            if (
                len(raw) >= 4
                and suffix
                and suffix not in _CODE_SUFFIX_UNITS
                and not (len(suffix) > 1 and suffix.lower() in _SEGMENT_UNITS)
            ):
                if not (suffix_j < self.n and is_han(t[suffix_j]) and len(suffix) > 2):
                    return read_digits(raw)  # 7950X, 4070Ti
            return None
        if (
            brand is not None
            and brand[1]
            and brand[0] in _TRAIN_LETTERS
            and len(raw) <= 4
            and self.after(end, 1) == "次"
            and not self.after(end, 2).endswith(("方", "数", "元", "幂"))
        ):
            return read_digits(raw, yao=True)  # T109次到北京: a train, as K1158次列车
        if (
            brand is not None
            and brand[0].isupper()
            and len(brand[0]) <= 3
            and self.after(end + 1 if self.after(end, 1) == " " else end, 3).startswith(
                _FLIGHT_AFTER
            )
        ):
            glued = brand[1] and self.after(end, 3).startswith(_FLIGHT_AFTER)
            # AA 128航班, MU 583次航班: a flight or train number; glued to the code and to
            # 航班/次列车 (MU5137航班, K1158次列车) it is said with 幺, as airport and station
            # announcements say it (as 车次G1234)
            return read_digits(raw, yao=glued)
        lead = i if brand is None else i - len(brand[0]) - (0 if brand[1] else 1)
        if (
            brand is not None
            and brand[0].isupper()
            and len(brand[0]) == 2
            and 2 <= len(raw) <= 4
            and self.before(lead, 5).rstrip(" ：:是为").endswith(_FLIGHT_BEFORE)
        ):
            # 航班UA 858 八五八, 乘坐CA1831 幺八三幺: a flight number (幺 when glued, as above)
            return read_digits(raw, yao=bool(brand[1]))
        nxt = self.after(end + 1 if self.after(end, 1) == " " else end, 1)
        if (
            brand is not None
            and not brand[1]
            and not noun_next  # RTX 4090笔记本, Xeon 6348处理器: 笔/处 start a noun
            and (nxt in _QUANTITY_NEXT or self.liang_next(end) or self.unit_at(end))
        ):
            return None  # "CPU 3000 元", "GPU 2 张": a quantity after a name, not a code
        mode = self.brands.get(brand[0].casefold()) if brand is not None else None
        if mode is None and brand is not None:
            mode = self.brands.get(brand[0].rstrip("+#").casefold())
        if mode is None and brand is not None and brand[1]:
            # 空客A320, 复兴号CR400: a Chinese brand name before the code's letters
            mode = self._han_brand_before(i - len(brand[0]))
        if brand is not None and brand[1] and self._mask_rating(brand[0], raw, i, end):
            return read_digits(raw)  # N95, KN95, KF94 口罩: a respirator class, N九五
        if mode == "standard" and brand is not None and brand[1] and len(raw) <= 3:
            mode = None  # GB200 (a chip): a standard's number is spaced or long (GB 2760, GB18030)
        if brand is not None and brand[0].upper() == "ISO" and self._camera_iso(raw, i):
            # 光圈f/1.8，ISO 100: a film speed, not ISO 100 the standard
            return read_cardinal(raw, liang_bai=False)
        if mode in _DIGIT_MODES:
            return read_digits(raw)
        if mode == "cardinal":
            return read_cardinal(raw, liang_bai=False)
        if brand is not None and not brand[1] and len(raw) < 4:
            return None  # "Windows 11", "Top 3": the ordinary rules (两个, 第, units)
        if len(raw) >= 4:
            return read_digits(raw)
        if brand is not None and brand[0] in ("x", "X") and raw in ("86", "64"):
            return read_digits(raw)  # x86, x64: the architectures (X 八六)
        if (
            len(raw) == 3
            and raw[1:] != "00"
            and brand is not None
            and brand[1]
            and is_latin_letter(self.t[i - 1])  # not 12GB+256GB: a sum of sizes
            and brand[0] not in ("v", "V")  # v126: a version
        ):
            return read_digits(raw)  # B650, Z790, C919, G502: a model number, digit by digit
        return read_cardinal(raw, liang_bai=False)  # A100 -> 一百, H200 -> 二百: a name

    _rules: list[Callable[[_Scanner, int], int]] = [
        _r_diff_stat,
        _r_currency,
        _r_phone,
        _r_sci,
        _r_negative,
        _r_ieee,
        _r_version_pair,
        _r_ip_version,
        _r_game_stats,
        _r_date,
        _r_time_ratio,
        _r_percent,
        _r_fraction,
        _r_slash_list,
        _r_range,
        _r_number,
    ]


def tokenize(text: str, brands: Mapping[str, str] | None = None, before: str = "") -> list[Piece]:
    """Cut ``text`` (one zh span) into pieces with local offsets; see :class:`Piece`.

    ``brands`` adds to or replaces rows of :func:`brand_table` (lower-cased brand -> mode);
    ``before`` is the text before the span in its sentence (read as context only).
    """
    if not text:
        return []
    keep = _visible_positions(text)
    if keep is None:
        return _Scanner(text, brands, before).run()
    pieces = _Scanner("".join(text[k] for k in keep), brands, before).run()
    return _restore_offsets(text, keep, pieces)


#: Characters next to which an invisible format character is read through: a number's
#: digits and marks (``12\u202e34``, ``RTX\u200e4090``, ``3.\u200b5``).
_NUMBER_CHARS = frozenset("0123456789.,:-/%+")


def _visible_positions(text: str) -> list[int] | None:
    """Indices of ``text`` without the invisible format characters (``Cf``: bidi marks,
    zero-width space, soft hyphen ...) that sit inside a number, or ``None`` if there are none.

    Inside a number such a character is an accident of copy and paste (a bidi mark around a
    right-to-left price, a zero-width space from a web page); scanning around it would read
    ``12`` and ``34`` as two numbers. Elsewhere the character stays and is skipped with a
    ``control-char`` warning."""
    if text.isascii():
        return None
    n = len(text)
    drop: set[int] = set()
    i = 0
    while i < n:
        if unicodedata.category(text[i]) != "Cf":
            i += 1
            continue
        j = i
        while j < n and unicodedata.category(text[j]) == "Cf":
            j += 1
        a, b = text[i - 1] if i else "", text[j] if j < n else ""
        inner = a and b and (a.isascii() and (a.isalnum() or a in _NUMBER_CHARS))
        inner = inner and b.isascii() and (b.isalnum() or b in _NUMBER_CHARS)
        if inner and (_is_digit(a) or _is_digit(b)):
            drop.update(range(i, j))
        i = j
    if not drop:
        return None
    return [k for k in range(n) if k not in drop]


def _restore_offsets(text: str, keep: list[int], pieces: list[Piece]) -> list[Piece]:
    """Map pieces of the text without format characters back onto ``text``: a dropped
    character inside a piece is listed in its ``hidden``, one between pieces becomes a
    ``skip`` piece of its own."""
    out: list[Piece] = []
    dropped = sorted(set(range(len(text))) - set(keep))
    d = 0
    for p in pieces:
        if p.end > p.start:
            start, end = keep[p.start], keep[p.end - 1] + 1
        else:  # an empty piece (none is made today): keep it where it stands
            start = end = keep[p.start] if p.start < len(keep) else len(text)
        while d < len(dropped) and dropped[d] < start:
            k = dropped[d]
            out.append(Piece(k, k + 1, "skip", "", _control_issue(text[k])))
            d += 1
        hidden: list[int] = []
        while d < len(dropped) and dropped[d] < end:
            hidden.append(dropped[d])
            d += 1
        out.append(Piece(start, end, p.kind, p.spoken, p.issue, tuple(hidden)))
    for k in dropped[d:]:
        out.append(Piece(k, k + 1, "skip", "", _control_issue(text[k])))
    return out


def _control_issue(c: str) -> tuple[str, str]:
    return ("control-char", f"control character U+{ord(c):04X}")


def brands_from_lexicon(words: Mapping[str, str | None]) -> dict[str, str]:
    """Brand rows from lexicon entries ``"<brand> #"`` whose spoken text names a mode.

    ``{"Galaxy S #": "digits"}`` -> ``{"galaxy s": "digits"}``; the brand key is matched
    against the Latin word right before the number, so the last word counts (``s``) as well.
    """
    out: dict[str, str] = {}
    for key, spoken in words.items():
        if key.endswith(" #") and spoken in BRAND_MODES:
            brand = key[:-2].strip()
            if brand:
                out[brand.casefold()] = spoken
                out[brand.split()[-1].casefold()] = spoken
    return out


def normalize_zh(text: str) -> str:
    """Written -> spoken Chinese: ``2024年1月5日 3:30`` -> ``二零二四年一月五日三点三十分``.

    Punctuation is kept as written; Latin letter runs that are acronyms (see
    :func:`is_acronym`) are upper-cased when written in lower case, because the frontend reads
    them letter by letter (``gpu`` -> ``GPU``; ``pH``, ``mA`` with a capital after a lower-case
    letter keep their case); longer words are
    kept as written; unreadable characters are dropped here (the frontend warns).
    Spaces between two Chinese pieces disappear; elsewhere one space is kept.
    """
    out: list[str] = []
    last_end = 0
    for p in tokenize(text):
        gap = p.start > last_end
        if gap and out and not (_is_cjkish(out[-1][-1]) and _is_cjkish(_first(p))):
            out.append(" ")
        if p.kind == "latin":
            # pH, mA, dB: a capital after a lower-case letter is the written form's meaning
            # and is kept; other acronyms are written in capitals (gpu, Atm -> GPU, ATM)
            inner_cap = any(
                a.islower() and b.isupper() for a, b in zip(p.spoken, p.spoken[1:], strict=False)
            )
            # of, you, The, Are: English function words are words, never letters (Shape of You)
            word = len(p.spoken) > 1 and p.spoken.lower() in EN_FUNCTION and not p.spoken.isupper()
            keep = " to " in p.spoken or not is_acronym(p.spoken) or inner_cap or word
            out.append(p.spoken if keep else p.spoken.upper())
        elif p.spoken:
            out.append(p.spoken)
        last_end = p.end
    return "".join(out)


def is_acronym(letters: str) -> bool:
    """Letter runs read one by one: up to three letters, or all capitals (``GB``, ``gpu``)."""
    return len(letters) <= 3 or letters.isupper()


def _first(p: Piece) -> str:
    return p.spoken[:1] or " "


def _is_cjkish(ch: str) -> bool:
    return is_han(ch) or ch in "，。、；：！？（）《》「」『』【】“”‘’…—"
