#!/usr/bin/env python3
"""Writes a deterministic Flickr-style Media RSS feed of about SIZE bytes, for Benchmarks/peers/ingest and run.

    Benchmarks/inputs/make-flickr-feed.py OUT SIZE_MB [--seed N] [--small-items]

Items look like Flickr's public photo feeds: an escaped-HTML description ("X posted a photo",
the thumbnail <img>, the caption), media:content / media:thumbnail / media:credit / media:title /
media:description (HTML), media:category, dc:creator, author, RFC 822 dates, guid. Titles and
captions vary across English, German, French, Japanese, Chinese, Russian, Arabic, and emoji; a
share of the captions carry markup (links, <b>, <br>, entities). The same seed always gives the
same bytes, and a smaller SIZE gives a prefix of the same items (so a 16 MB slice for feedparser
is the first items of the big feed, closed properly).

--small-items writes the other shape public photo feeds come in: items of about 580 bytes (title, link, guid,
pubDate, an escaped-HTML description with one <a> and a one-line caption, media:content, media:credit), where the
cost per item outweighs the cost per byte. 55.3 MiB of them are 100,000 items.
"""
import argparse
import random
import sys
from xml.sax.saxutils import escape

WORDS = {
    "en": "sunset over the harbour with gulls and a red lighthouse morning fog rolling across quiet hills "
          "street market colours old town bridge river reflections autumn leaves long exposure city lights".split(),
    "de": "Sonnenuntergang über dem Hafen Möwen Leuchtturm Nebel über stillen Hügeln Straßenmarkt Altstadt "
          "Brücke Spiegelung Herbstblätter Langzeitbelichtung Großstadtlichter Grüße aus München".split(),
    "fr": "coucher de soleil sur le port mouettes phare brouillard matinal collines marché coloré vieille "
          "ville pont reflets feuilles d’automne pose longue lumières de la ville été à Montréal".split(),
    "ja": "港の夕焼け カモメ 赤い灯台 朝霧 静かな丘 商店街 旧市街 橋 川の反射 紅葉 長時間露光 夜景 東京 京都 桜".split(),
    "zh": "港口日落 海鸥 红色灯塔 晨雾 安静的山丘 街头市场 老城 桥 河流倒影 秋叶 长曝光 城市灯光 上海 北京".split(),
    "ru": "закат над гаванью чайки красный маяк утренний туман тихие холмы рынок старый город мост "
          "отражения осенние листья длинная выдержка огни города".split(),
    "ar": "غروب الشمس فوق الميناء النوارس منارة حمراء ضباب الصباح تلال هادئة سوق الشارع المدينة القديمة".split(),
}
EMOJI = ["📷", "🌅", "🌸", "🏙️", "🌊", "🍂", "✨", "🚲"]
USERS = ["alice_k", "Bernd Müller", "クロエ", "Dmitri Ivanov", "Émilie Dubois", "王小明", "فاطمة", "lens&light"]
DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
SIZES = [(1024, 683), (1024, 768), (683, 1024), (1024, 1024), (1024, 576), (800, 1200)]


def phrase(rng, language, count):
    words = WORDS[language]
    joiner = "" if language in ("ja", "zh") else " "
    return joiner.join(rng.choice(words) for _ in range(count))


def caption(rng, language):
    text = phrase(rng, language, rng.randint(6, 40))
    kind = rng.random()
    if kind < 0.35:  # plain
        return text, False
    if kind < 0.7:  # light markup, as people paste it
        link = f"https://www.flickr.com/groups/{rng.randint(1000, 99999)}"
        return (f"{text}<br /><br />\n<b>{phrase(rng, language, 3)}</b> &amp; "
                f"<a href=\"{link}\" rel=\"nofollow\">{phrase(rng, language, 2)}</a> {rng.choice(EMOJI)}"), True
    # longer story with paragraphs and entities
    paragraphs = "".join(f"<p>{phrase(rng, language, rng.randint(10, 30))}&nbsp;{rng.choice(EMOJI)}</p>"
                         for _ in range(rng.randint(2, 4)))
    return paragraphs, True


def photo(rng, index):
    """What every item draws first, in this order (the seeded sequence, and so the feed's bytes, depend on it):
    the language, the user, their id, the photo's id, server and secret, its size."""
    language = rng.choice(list(WORDS))
    user = rng.choice(USERS)
    user_id = f"{rng.randint(10000000, 99999999)}@N0{rng.randint(0, 8)}"
    photo_id = 50000000000 + index * 7919 + rng.randint(0, 7000)
    server, secret = rng.randint(65000, 65535), f"{rng.getrandbits(40):010x}"
    width, height = rng.choice(SIZES)
    return language, user, user_id, photo_id, server, secret, width, height


def item(rng, index):
    language, user, user_id, photo_id, server, secret, width, height = photo(rng, index)
    title = phrase(rng, language, rng.randint(2, 7))
    if rng.random() < 0.2:
        title += " " + rng.choice(EMOJI)
    text, is_html = caption(rng, language)
    page = f"https://www.flickr.com/photos/{user_id}/{photo_id}/"
    large = f"https://live.staticflickr.com/{server}/{photo_id}_{secret}_b.jpg"
    small = f"https://live.staticflickr.com/{server}/{photo_id}_{secret}_s.jpg"
    thumb_w, thumb_h = (240, round(240 * height / width)) if width >= height else (round(240 * width / height), 240)
    quoted_title = escape(title, {'"': "&quot;"})
    medium = small.replace("_s.", "_m.")
    description_html = (
        f"<p><a href=\"https://www.flickr.com/people/{user_id}/\">{escape(user)}</a> posted a photo:</p> "
        f"<p><a href=\"{page}\" title=\"{quoted_title}\"><img src=\"{medium}\" "
        f"width=\"{thumb_w}\" height=\"{thumb_h}\" alt=\"{quoted_title}\" /></a></p> "
        f"<p>{text if is_html else escape(text)}</p>")
    day = rng.randint(1, 28)
    month = rng.randrange(12)
    year = rng.randint(2008, 2025)
    date = (f"{DAYS[(day + month * 3 + year) % 7]}, {day:02d} {MONTHS[month]} {year} "
            f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d} "
            f"{rng.choice(['-0800', '-0700', '+0000', '+0100', '+0900', 'GMT', 'PST'])}")
    tags = " ".join(rng.choice(WORDS["en"]) for _ in range(rng.randint(2, 8)))
    media_description = (f"<media:description type=\"html\">{escape(description_html)}</media:description>\n"
                         if rng.random() < 0.5 else "")
    return (
        "<item>\n"
        f"<title>{escape(title)}</title>\n"
        f"<link>{page}</link>\n"
        f"<description>{escape(description_html)}</description>\n"
        f"<pubDate>{date}</pubDate>\n"
        f"<dc:date.Taken>{year}-{month + 1:02d}-{day:02d}T10:00:00-08:00</dc:date.Taken>\n"
        f"<author flickr:profile=\"https://www.flickr.com/people/{user_id}/\">nobody@flickr.com ({escape(user)})</author>\n"
        f"<dc:creator>{escape(user)}</dc:creator>\n"
        f"<guid isPermaLink=\"false\">tag:flickr.com,2004:/photo/{photo_id}</guid>\n"
        f"<media:content url=\"{large}\" type=\"image/jpeg\" height=\"{height}\" width=\"{width}\" medium=\"image\"/>\n"
        f"<media:title>{escape(title)}</media:title>\n"
        f"{media_description}"
        f"<media:thumbnail url=\"{small}\" height=\"75\" width=\"75\"/>\n"
        f"<media:credit role=\"photographer\">{escape(user)}</media:credit>\n"
        f"<media:category scheme=\"urn:flickr:tags\">{escape(tags)}</media:category>\n"
        "</item>\n")


def small_item(rng, index):
    """An item as the smaller Flickr-style feeds carry them: about 580 bytes, one link in its HTML."""
    language, user, user_id, photo_id, server, secret, width, height = photo(rng, index)
    title = phrase(rng, language, rng.randint(1, 3))
    words = phrase(rng, language, rng.randint(1, 4))
    description_html = f"<a href=\"https://www.flickr.com/people/{user_id}/\">{escape(user)}</a> posted a photo: {escape(words)}"
    day, month, year = rng.randint(1, 28), rng.randrange(12), rng.randint(2008, 2025)
    date = (f"{DAYS[(day + month * 3 + year) % 7]}, {day:02d} {MONTHS[month]} {year} "
            f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d} -0800")
    return (
        "<item>\n"
        f"<title>{escape(title)}</title>\n"
        f"<link>https://www.flickr.com/photos/{user_id}/{photo_id}/</link>\n"
        f"<guid isPermaLink=\"false\">tag:flickr.com,2004:/photo/{photo_id}</guid>\n"
        f"<pubDate>{date}</pubDate>\n"
        f"<description>{escape(description_html)}</description>\n"
        f"<media:content url=\"https://live.staticflickr.com/{server}/{photo_id}_{secret}_b.jpg\" "
        f"type=\"image/jpeg\" height=\"{height}\" width=\"{width}\"/>\n"
        f"<media:credit role=\"photographer\">{escape(user)}</media:credit>\n"
        "</item>\n")


HEAD = """<?xml version="1.0" encoding="utf-8" standalone="yes"?>
<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/" xmlns:dc="http://purl.org/dc/elements/1.1/"
     xmlns:creativeCommons="http://cyber.law.harvard.edu/rss/creativeCommonsRssModule.html"
     xmlns:flickr="urn:flickr:user">
<channel>
<title>Uploads from everyone (FeedLayout benchmark)</title>
<link>https://www.flickr.com/photos/</link>
<description>A generated Flickr-style Media RSS feed</description>
<pubDate>Sat, 21 Nov 2026 10:00:00 -0800</pubDate>
<generator>https://www.flickr.com/</generator>
"""
TAIL = "</channel>\n</rss>\n"


def main():
    parser = argparse.ArgumentParser(description="Writes a deterministic Flickr-style Media RSS feed.")
    parser.add_argument("out")
    parser.add_argument("size_mb", type=float, help="the feed's size in MiB (a decimal number is fine)")
    parser.add_argument("--seed", type=int, default=20261122)
    parser.add_argument("--small-items", action="store_true", help="items of about 580 bytes (see above)")
    arguments = parser.parse_args()
    out, make_item = arguments.out, small_item if arguments.small_items else item
    target = int(arguments.size_mb * 1024 * 1024) - len(TAIL)
    rng = random.Random(arguments.seed)
    written = 0
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        head = HEAD
        f.write(head)
        written += len(head.encode())
        index = 0
        batch = []
        while written < target:
            text = make_item(rng, index)
            encoded = len(text.encode())
            if written + encoded > target:
                break
            batch.append(text)
            written += encoded
            index += 1
            if len(batch) == 2000:
                f.write("".join(batch))
                batch.clear()
        f.write("".join(batch))
        f.write(TAIL)
    print(f"{out}: {index} items, {written + len(TAIL)} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
