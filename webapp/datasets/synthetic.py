"""Synthetic events for benchmarks: many plausible events, the same ones for the same seed.

Taiwan's tech events are written in Chinese, in English, and in both at once (「Python 資料分析
入門營」, "Taipei JavaScript Monthly Meetup｜台北 JavaScript 月聚"), so each event is written in
one of these voices (`VOICES`). Words come in the frequencies search meets on a real site: a
few words in most events (`COMMON_WORDS`: "community", 社群, 分享), topics whose popularity
falls off like a Zipf law (a few in several percent of events, most in under one percent),
rare topics in about one event in two thousand each (`RARE_TOPICS`), event formats and
everyday words in between. Places are written both ways Taiwan writes them (台北 and 臺北).
Every location, price and level is used, and start times spread over the year before and
the year after `now`, so about half of the events are upcoming.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from datetime import time
from datetime import timedelta
from typing import TypeVar
from zoneinfo import ZoneInfo

from ..domain.schemas import LEVELS
from ..domain.schemas import LOCATIONS
from ..domain.schemas import PRICES
from ..storage import Event

T = TypeVar("T")

SPREAD_DAYS = 365  # events start up to this many days before or after `now`
ZIPF_EXPONENT = 1.0  # the n-th most popular topic is held by about 1/n as many events
RARE_SHARE = 0.005  # of events about one of the rare topics (each: RARE_SHARE / their number)
COMMON_SHARE = 0.8  # of summaries that name the voice's common word


@dataclass(frozen=True)
class Words:
    """One thing said in English and in Chinese, with the slug an event id may carry."""

    en: str
    zh: str
    slug: str


def _words(*rows: tuple[str, str, str]) -> tuple[Words, ...]:
    return tuple(Words(*row) for row in rows)


# In order of popularity (see ZIPF_EXPONENT). Many keep their English name in Chinese text,
# as Taiwanese organizers write them.
TOPICS = _words(
    ("AI Agents", "AI 代理人", "ai-agents"), ("Python", "Python", "python"),
    ("Security", "資安", "security"), ("Frontend", "前端", "frontend"),
    ("LLM Apps", "LLM 應用", "llm-apps"), ("Data Science", "資料科學", "data-science"),
    ("JavaScript", "JavaScript", "javascript"), ("Machine Learning", "機器學習", "ml"),
    ("Cloud Native", "雲端原生", "cloud-native"), ("Accessibility", "無障礙", "a11y"),
    ("WebMCP", "WebMCP", "webmcp"), ("Kubernetes", "Kubernetes", "kubernetes"),
    ("Prompt Injection", "提示注入", "prompt-injection"), ("React", "React", "react"),
    ("Design Systems", "設計系統", "design-systems"), ("Rust", "Rust", "rust"),
    ("Testing", "軟體測試", "testing"), ("TypeScript", "TypeScript", "typescript"),
    ("Product Design", "產品設計", "product-design"), ("Go", "Go", "go"),
    ("Open Source", "開源", "open-source"), ("Data Visualization", "資料視覺化", "dataviz"),
    ("PostgreSQL", "PostgreSQL", "postgresql"), ("Web Performance", "網頁效能", "web-perf"),
    ("DevOps", "DevOps", "devops"), ("Mobile Apps", "行動應用", "mobile"),
    ("Vue", "Vue", "vue"), ("Observability", "可觀測性", "observability"),
    ("Game Development", "遊戲開發", "gamedev"), ("Django", "Django", "django"),
    ("Flask", "Flask", "flask"), ("htmx", "htmx", "htmx"),
    ("Computer Vision", "電腦視覺", "computer-vision"), ("Threat Modeling", "威脅建模", "threats"),
    ("Semantic HTML", "語意化 HTML", "semantic-html"), ("IoT", "物聯網", "iot"),
    ("Web Components", "Web Components", "web-components"), ("SQLite", "SQLite", "sqlite"),
    ("Svelte", "Svelte", "svelte"), ("Robotics", "機器人", "robotics"),
)
# Each in about one event in two thousand; none is a prefix of another word generated here.
RARE_TOPICS = _words(
    ("Haskell", "Haskell", "haskell"), ("Elixir", "Elixir", "elixir"),
    ("Fortran", "Fortran", "fortran"), ("Quantum Computing", "量子計算", "quantum"),
    ("Zig", "Zig", "zig"), ("Bioinformatics", "生物資訊", "bioinformatics"),
    ("Smalltalk", "Smalltalk", "smalltalk"), ("Embedded Firmware", "嵌入式韌體", "firmware"),
    ("Satellite Data", "衛星遙測", "satellite"), ("OCaml", "OCaml", "ocaml"),
)
FORMATS = _words(
    ("Meetup", "小聚", "meetup"), ("Workshop", "工作坊", "workshop"),
    ("Study Group", "讀書會", "study-group"), ("Conference", "研討會", "conference"),
    ("Talk Night", "講座", "talk"), ("Hackathon", "黑客松", "hackathon"),
    ("Bootcamp", "訓練營", "bootcamp"), ("Office Hours", "諮詢時間", "office-hours"),
    ("Demo Day", "成果發表會", "demo-day"), ("Reading Club", "共讀會", "reading-club"),
)
FORMAT_WEIGHTS = (30, 25, 12, 10, 8, 5, 4, 3, 2, 1)
LEVEL_WORDS = {"beginner": Words("for Beginners", "入門", "beginners"),
               "intermediate": Words("in Practice", "實戰", "practice"),
               "advanced": Words("Deep Dive", "進階深入", "deep-dive")}
CITIES = {"taipei": Words("Taipei", "台北", "taipei"),
          "taichung": Words("Taichung", "台中", "taichung"),
          "kaohsiung": Words("Kaohsiung", "高雄", "kaohsiung"),
          "online": Words("Online", "線上", "online")}
# Taiwan writes 臺 as often as 台 in formal names: a third of the Chinese place names use it.
FORMAL_TAI = 1 / 3
# The word most summaries of each voice carry ("community", 社群), then 分享 in many others.
COMMON_WORDS = Words("community", "社群", "community")
COMMON_WORD = COMMON_WORDS.en

VENUES = {
    "taipei": ("台北國際會議中心 201 會議室", "臺北市青年創業基地（中正區）",
               "集思台大會議中心（大安區）",
               "CLBC Daan Co-working Space", "Taipei Fintech Space, Xinyi District",
               "Garage+ Tech Hub, Songshan｜松山 Garage+ 創業基地"),
    "taichung": ("台中創新創業園區（文心路）", "臺中市數位創新基地", "逢甲大學資訊電機館",
                 "Feng Chia University, Room 301", "Tunghai University, Computer Science Building"),
    "kaohsiung": ("高雄軟體園區（前鎮區）", "駁二藝術特區 大義倉庫", "亞灣 5G AIoT 創新園區",
                  "Kaohsiung Software Park, Conference Room B", "Pier-2 Art Center, Warehouse C5"),
    "online": ("線上直播（YouTube Live）", "線上會議（Google Meet）", "Online (Zoom)",
               "Online (Jitsi Meet)", "Online (YouTube Live)｜線上直播"),
}


@dataclass(frozen=True)
class Voice:
    """How events of one kind are written: title, summary and description templates."""

    name: str
    share: float
    titles: tuple[str, ...]
    summaries: tuple[str, ...]
    plain_summaries: tuple[str, ...]  # without the common word
    endings: tuple[str, ...]
    description: str


# {topic}, {format}, {city}, {level}: in the voice's language; {topic_en}: the English name.
VOICES = (
    Voice(
        name="zh", share=0.45,
        titles=("{city}{topic}{format}", "{topic}{level}{format}", "{topic}{format}：從零到上線",
                "{city} {topic} {format}", "給工程師的{topic}{format}", "{topic}實作{format}"),
        summaries=("{common}夥伴一起動手做{topic}，{format}現場帶你完成範例",
                   "{city}{common}的{topic}{format}，邀請講者分享實戰經驗",
                   "跟著{common}導師一步步學{topic}，適合{level}的你"),
        plain_summaries=("小班制{format}，動手學{topic}", "一晚的{topic}短講與交流",
                         "從概念到範例，帶你認識{topic}"),
        endings=("；帶筆電來，現場備有點心。", "，會後開放提問與交流。",
                 "：簡報與範例程式會在活動後分享。", "，歡迎新朋友加入。",
                 "；不需要先備知識，只要好奇心。"),
        description=("{summary}\n\n這場{format}會介紹{topic}背後的觀念，帶大家走過一個真實的範例，"
                     "並保留時間回答你的問題。活動由{city}開發者{common}的志工籌辦，"
                     "所有參加者都須遵守行為準則。"),
    ),
    Voice(
        name="en", share=0.35,
        titles=("{topic} {format}", "{topic} {level}", "Hands-on {topic}", "{topic} in Production",
                "{topic} {format}: Lessons from the Field", "{city} {topic} {format}",
                "Intro to {topic}"),
        summaries=("A friendly {common} {format} about {topic}",
                   "Join the local {common} for an evening of {topic}",
                   "Short talks and open discussion on {topic} from the {common}"),
        plain_summaries=("A small-group {format} about {topic}",
                         "An evening of {topic} talks and demos",
                         "Learn {topic} step by step with experienced mentors"),
        endings=("; we start from a blank project and finish with a working demo.",
                 ", with time for questions and pairing afterwards.",
                 ": slides, code and recordings are shared after the session.",
                 ", followed by snacks and a relaxed networking hour.",
                 "; no prior experience needed, just curiosity."),
        description=("{summary}\n\nWe cover the ideas behind {topic}, walk through a realistic "
                     "example and leave room for your own questions. The session is run by "
                     "volunteers from the {city} developer {common}; the code of conduct applies "
                     "to everyone."),
    ),
    Voice(
        name="mixed", share=0.20,
        titles=("{topic_en} {format_en}｜{topic}{format}",
                "{city} {topic_en} Meetup｜{city}{topic}小聚",
                "{topic}{format} ({topic_en} {format_en})"),
        summaries=("{common}一起聊 {topic_en}：{format}現場分享 hands-on 經驗",
                   "A bilingual {format_en} on {topic_en}｜{common}雙語{format}"),
        plain_summaries=("{topic_en} 實作分享，English slides, 中文講解",),
        endings=("；Q&A in English and 中文。", "，會後 networking。"),
        description=("{summary}\n\n講者會用中文講解、英文簡報，介紹 {topic_en} 的核心觀念與"
                     "實作範例。"
                     "Hosted by the {city_en} developer community｜{city}開發者{common}。"),
    ),
)
CAPACITIES = (8, 12, 20, 24, 30, 40, 50, 60, 80, 100, 120, 150, 200, 300)
DURATIONS_MINUTES = (60, 90, 120, 180, 240)
# How often each value of a filter is used, in the order of its vocabulary.
LOCATION_WEIGHTS = dict(zip(LOCATIONS, (40, 15, 15, 30), strict=True))
PRICE_WEIGHTS = dict(zip(PRICES, (55, 45), strict=True))
LEVEL_WEIGHTS = dict(zip(LEVELS, (45, 35, 20), strict=True))


def _pick(rng: random.Random, weights: dict[str, int]) -> str:
    return rng.choices(list(weights), weights=list(weights.values()))[0]


def _zipf(count: int) -> list[float]:
    return [1 / rank ** ZIPF_EXPONENT for rank in range(1, count + 1)]


def _place(rng: random.Random, city: Words) -> str:
    """A Chinese place name, written with 臺 as often as Taiwan does."""
    return city.zh.replace("台", "臺") if rng.random() < FORMAL_TAI else city.zh


# What a paid synthetic event costs, in New Taiwan dollars.
PAID_AMOUNTS = (300, 500, 800, 1200, 1500, 2500)


def _choose(rng: random.Random, options: Sequence[T]) -> T:
    return options[rng.randrange(len(options))]


def generate_events(count: int, seed: int, now: datetime, timezone: ZoneInfo
                    ) -> Iterator[Event]:
    """`count` events, always the same ones for the same seed and `now`."""
    rng = random.Random(seed)
    today = now.astimezone(timezone).date()
    topic_weights = _zipf(len(TOPICS))
    voice_weights = [voice.share for voice in VOICES]
    for number in range(1, count + 1):
        voice = rng.choices(VOICES, weights=voice_weights)[0]
        rare = rng.random() < RARE_SHARE
        topic = (_choose(rng, RARE_TOPICS) if rare
                 else rng.choices(TOPICS, weights=topic_weights)[0])
        form = rng.choices(FORMATS, weights=FORMAT_WEIGHTS)[0]
        location, price, level = (_pick(rng, LOCATION_WEIGHTS), _pick(rng, PRICE_WEIGHTS),
                                  _pick(rng, LEVEL_WEIGHTS))
        city = CITIES[location]
        english = voice.name == "en"
        words = {
            "topic": topic.en if english else topic.zh, "topic_en": topic.en,
            "format": form.en if english else form.zh, "format_en": form.en,
            "format_lower": form.en.lower(), "level": (LEVEL_WORDS[level].en if english
                                                      else LEVEL_WORDS[level].zh),
            "city": city.en if english else _place(rng, city), "city_en": city.en,
            "common": COMMON_WORDS.en if english else COMMON_WORDS.zh,
        }
        title = _choose(rng, voice.titles).format(**words)
        if english:  # "a friendly community workshop about…": formats are lower case in text
            words["format"] = words["format_lower"]
        openings = voice.summaries if rng.random() < COMMON_SHARE else voice.plain_summaries
        summary = _choose(rng, openings).format(**words) + _choose(rng, voice.endings)
        day = today + timedelta(days=rng.randint(-SPREAD_DAYS, SPREAD_DAYS))
        starts = datetime.combine(day, time(rng.randint(9, 19), rng.choice((0, 30))),
                                  tzinfo=timezone)
        capacity = rng.choice(CAPACITIES)
        yield Event(
            id=f"evt-{topic.slug}-{form.slug}-{number:06d}",
            title=title,
            summary=summary,
            description=voice.description.format(**words, summary=summary),
            starts_at=starts,
            ends_at=starts + timedelta(minutes=rng.choice(DURATIONS_MINUTES)),
            location=location,
            venue=_choose(rng, VENUES[location]),
            price=price,
            level=level,
            capacity=capacity,
            held_seats=rng.randint(0, capacity // 10),
            registration_deadline=starts - timedelta(days=rng.randint(0, 3)),
            # Not drawn from `rng`: the events of a seed stay the ones they were before prices.
            price_amount=PAID_AMOUNTS[number % len(PAID_AMOUNTS)] if price == "paid" else None,
        )
