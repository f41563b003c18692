#!/usr/bin/env python3
"""Writes the shape matrix's feeds (Benchmarks/peers/shapes): COUNT small items in each of five shapes, over the
photos in OUT_DIR/photos (made by make-images.py), deterministic (seeded).

    Benchmarks/inputs/make-shape-feeds.py OUT_DIR [COUNT] [--seed N]

Shapes (one file each in OUT_DIR):
  flickr.xml   Flickr-style Media RSS: an escaped-HTML caption with a link, pubDate, guid isPermaLink="false",
               media:credit, one media:content without a size (issue 39's feed)
  rss2.xml     plain RSS 2.0: an enclosure, a description (escaped or CDATA), optional author, category, comments
  atom.xml     Atom 1.0 with xhtml content (an <img> in it, or a link rel="enclosure"), default or prefixed namespace
  rss1.xml     RSS 1.0 (RDF): dc:date, dc:creator, description, content:encoded with an <img>, or a media:thumbnail
  feed.json    JSON Feed 1.1: image, attachments or an <img> in content_html; content_text or content_html

So that no shape is one the code was tuned on, every generator varies, item by item: the order of the fields, which
optional fields are there, the namespace prefixes (media: or m:, dc: or dcel:, atom: or the default namespace), CDATA
against escaped text, and whether an image declares a size (sometimes a wrong one: the header decides). Items average
about 500-650 bytes. Every photo reference is relative to the feed's folder, so the layout reads the real files; a
few items have no image at all (the fallback aspect ratio). The same seed gives the same bytes.
"""
import argparse
import json
import os
import random
import sys
from xml.sax.saxutils import escape

WORDS = {
    "en": "sunset harbour gulls red lighthouse morning fog quiet hills street market old town bridge river "
          "reflections autumn leaves long exposure city lights".split(),
    "de": "Sonnenuntergang Hafen Möwen Leuchtturm Nebel Hügel Straßenmarkt Altstadt Brücke Spiegelung".split(),
    "fr": "coucher soleil port mouettes phare brouillard collines marché vieille ville pont reflets".split(),
    "ja": "港の夕焼け カモメ 赤い灯台 朝霧 静かな丘 商店街 旧市街 橋 川の反射 紅葉".split(),
    "ru": "закат гавань чайки маяк туман холмы рынок город мост отражения".split(),
}
USERS = ["alice_k", "Bernd Müller", "クロエ", "Dmitri Ivanov", "Émilie Dubois", "lens&light", "o'neil", "Zoë"]
DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


class Item:
    """What every shape draws for an item, in one order, so a seed gives the same texts in every shape."""

    def __init__(self, rng, index, photos):
        self.language = rng.choice(list(WORDS))
        joiner = "" if self.language == "ja" else " "
        words = WORDS[self.language]
        self.title = joiner.join(rng.choice(words) for _ in range(rng.randint(1, 4)))
        self.caption = joiner.join(rng.choice(words) for _ in range(rng.randint(2, 12)))
        self.user = rng.choice(USERS)
        self.user_id = f"{rng.randint(10000000, 99999999)}@N0{rng.randint(0, 8)}"
        self.photo_id = 50000000000 + index * 7919 + rng.randint(0, 7000)
        self.link = f"https://www.example.org/photos/{self.user_id}/{self.photo_id}/"
        self.photo = None if rng.random() < 0.01 else f"photos/{rng.choice(photos)}"
        # A declared size: none, a plausible one, or a wrong one (the header wins either way).
        kind = rng.random()
        self.size = None if kind < 0.5 else (rng.choice([(1024, 683), (800, 1200), (640, 640)]))
        self.year, self.month, self.day = rng.randint(2008, 2025), rng.randrange(12), rng.randint(1, 28)
        self.hour, self.minute, self.second = rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59)
        self.has_date = rng.random() < 0.9
        self.has_author = rng.random() < 0.7
        self.cdata = rng.random() < 0.4
        self.rng = rng

    def rfc822(self):
        return (f"{DAYS[(self.day + self.month * 3 + self.year) % 7]}, {self.day:02d} {MONTHS[self.month]} {self.year} "
                f"{self.hour:02d}:{self.minute:02d}:{self.second:02d} {self.rng.choice(['-0800', '+0000', 'GMT'])}")

    def iso(self):
        return (f"{self.year}-{self.month + 1:02d}-{self.day:02d}T{self.hour:02d}:{self.minute:02d}:"
                f"{self.second:02d}{self.rng.choice(['Z', '+01:00', '-08:00'])}")

    def caption_html(self):
        """The caption as HTML: a link to the photographer, the words, sometimes an entity or emphasis."""
        extra = self.rng.choice(["", " &amp; friends", " <b>new</b>", "<br/>more", " &#8212; 📷"])
        return (f'<a href="https://www.example.org/people/{self.user_id}/">{escape(self.user)}</a> posted a photo: '
                f"{escape(self.caption)}{extra}")

    def text(self, html):
        """HTML as element text: CDATA or escaped."""
        return f"<![CDATA[{html}]]>" if self.cdata and "]]>" not in html else escape(html)


def shuffled(rng, parts):
    """The item's elements in a random order (the first one, the title or id, sometimes stays first)."""
    parts = [part for part in parts if part]
    rng.shuffle(parts)
    return "".join(parts)


def flickr(item, rng):
    m = rng.choice(["media", "media", "m"])
    parts = [
        f"<title>{escape(item.title)}</title>\n",
        f"<link>{item.link}</link>\n",
        f'<guid isPermaLink="false">tag:example.org,2004:/photo/{item.photo_id}</guid>\n',
        f"<pubDate>{item.rfc822()}</pubDate>\n" if item.has_date else "",
        f"<description>{item.text(item.caption_html())}</description>\n",
        f'<{m}:content url="{item.photo}" type="image/jpeg"/>\n' if item.photo else "",
        f'<{m}:credit role="photographer">{escape(item.user)}</{m}:credit>\n',
    ]
    # Issue 39's shape keeps Flickr's order; a third of the items come in another.
    body = "".join(p for p in parts if p) if rng.random() < 0.67 else shuffled(rng, parts)
    return f"<item>\n{body}</item>\n"


def rss2(item, rng):
    enclosure = ""
    if item.photo:
        length = rng.randint(20000, 900000)
        kind = "image/png" if item.photo.endswith(".png") else "image/jpeg"
        enclosure = f'<enclosure url="{item.photo}" length="{length}" type="{kind}"/>\n'
    description = item.caption if rng.random() < 0.5 else item.caption_html()
    parts = [
        f"<title>{item.text(item.title) if item.cdata else escape(item.title)}</title>\n",
        f"<link>{item.link}</link>\n",
        f"<guid>{item.link}</guid>\n" if rng.random() < 0.8 else "",
        f"<pubDate>{item.rfc822()}</pubDate>\n" if item.has_date else "",
        f"<description>{item.text(description)}</description>\n",
        enclosure,
        f"<author>nobody@example.org ({escape(item.user)})</author>\n" if item.has_author else "",
        f"<category>{escape(rng.choice(WORDS['en']))}</category>\n" if rng.random() < 0.5 else "",
        f"<comments>{item.link}#comments</comments>\n" if rng.random() < 0.3 else "",
    ]
    return f"<item>\n{shuffled(rng, parts)}</item>\n"


def atom(item, rng, prefix):
    a = f"{prefix}:" if prefix else ""
    image = ""
    if item.photo and rng.random() < 0.5:
        size = f' width="{item.size[0]}" height="{item.size[1]}"' if item.size else ""
        image = f'<p><img src="{item.photo}" alt="{escape(item.title, {chr(34): "&quot;"})}"{size}/></p>'
    xhtml = (f'<div xmlns="http://www.w3.org/1999/xhtml">{image}<p><a href="https://www.example.org/people/'
             f'{item.user_id}/">{escape(item.user)}</a> {escape(item.caption)}</p></div>')
    enclosure = ""
    if item.photo and not image:
        kind = "image/png" if item.photo.endswith(".png") else "image/jpeg"
        enclosure = f'<{a}link rel="enclosure" type="{kind}" href="{item.photo}"/>\n'
    parts = [
        f"<{a}title>{escape(item.title)}</{a}title>\n" if not item.cdata
        else f'<{a}title type="html">{item.text(escape(item.title))}</{a}title>\n',
        f'<{a}link rel="alternate" type="text/html" href="{item.link}"/>\n',
        f"<{a}id>tag:example.org,2026:photo/{item.photo_id}</{a}id>\n",
        f"<{a}updated>{item.iso()}</{a}updated>\n",
        f"<{a}published>{item.iso()}</{a}published>\n" if item.has_date else "",
        f"<{a}author><{a}name>{escape(item.user)}</{a}name></{a}author>\n" if item.has_author else "",
        f'<{a}content type="xhtml">{xhtml}</{a}content>\n',
        enclosure,
    ]
    return f"<{a}entry>\n{shuffled(rng, parts)}</{a}entry>\n"


def rss1(item, rng, dc):
    about = item.link
    image = ""
    html = item.caption_html()
    if item.photo:
        if rng.random() < 0.5:
            size = f' width="{item.size[0]}" height="{item.size[1]}"' if item.size else ""
            html = f'<img src="{item.photo}"{size}/> ' + html
        else:
            size = f' width="{item.size[0]}" height="{item.size[1]}"' if item.size else ""
            image = f'<media:thumbnail url="{item.photo}"{size}/>\n'
    parts = [
        f"<title>{escape(item.title)}</title>\n",
        f"<link>{item.link}</link>\n",
        f"<description>{escape(item.caption)}</description>\n" if rng.random() < 0.6 else "",
        f"<{dc}:date>{item.iso()}</{dc}:date>\n" if item.has_date else "",
        f"<{dc}:creator>{escape(item.user)}</{dc}:creator>\n" if item.has_author else "",
        f"<content:encoded>{item.text(html)}</content:encoded>\n",
        image,
    ]
    return f'<item rdf:about="{about}">\n{shuffled(rng, parts)}</item>\n', about


def json_item(item, rng):
    entry = {}
    keys = ["id", "url", "title", "content", "date_published", "authors", "image"]
    rng.shuffle(keys)
    for key in keys:
        if key == "id":
            entry["id"] = f"tag:example.org,2026:photo/{item.photo_id}" if rng.random() < 0.7 else str(item.photo_id)
        elif key == "url":
            entry["url"] = item.link
        elif key == "title":
            entry["title"] = item.title
        elif key == "content":
            if rng.random() < 0.5:
                entry["content_text"] = f"{item.user} posted a photo: {item.caption}"
            else:
                html = item.caption_html()
                if item.photo and rng.random() < 0.3:
                    html = f'<p><img src="{item.photo}"/></p><p>{html}</p>'
                    item.photo = None  # the <img> is the image
                entry["content_html"] = html
        elif key == "date_published" and item.has_date:
            entry["date_published"] = item.iso()
        elif key == "authors" and item.has_author:
            entry["authors"] = [{"name": item.user}]
        elif key == "image":
            pass
    if item.photo:
        if rng.random() < 0.6:
            entry["image"] = item.photo
        else:
            kind = "image/png" if item.photo.endswith(".png") else "image/jpeg"
            entry["attachments"] = [{"url": item.photo, "mime_type": kind}]
    return json.dumps(entry, ensure_ascii=rng.random() < 0.5, separators=(",", ":") if rng.random() < 0.5 else None)


RSS2_HEAD = """<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"{namespaces}>
<channel>
<title>Shape matrix: {shape}</title>
<link>https://www.example.org/</link>
<description>A generated feed of small items (FeedLayout benchmark)</description>
"""


def write_feeds(out, count, seed, photos):
    files = {}
    rngs = {}
    for offset, shape in enumerate(["flickr", "rss2", "atom", "rss1", "json"]):
        rngs[shape] = random.Random(seed * 10 + offset)
    texts = random.Random(seed)
    atom_prefix = "" if random.Random(seed + 1).random() < 0.5 else "atom"
    names = {"flickr": "flickr.xml", "rss2": "rss2.xml", "atom": "atom.xml", "rss1": "rss1.xml", "json": "feed.json"}
    for shape, name in names.items():
        files[shape] = open(os.path.join(out, name), "w", encoding="utf-8", newline="\n")
    files["flickr"].write(RSS2_HEAD.format(
        shape="Flickr-style Media RSS", namespaces=' xmlns:media="http://search.yahoo.com/mrss/"'
        ' xmlns:m="http://search.yahoo.com/mrss/" xmlns:dc="http://purl.org/dc/elements/1.1/"'))
    files["rss2"].write(RSS2_HEAD.format(shape="RSS 2.0 with enclosures", namespaces=""))
    default = ' xmlns="http://www.w3.org/2005/Atom"' if not atom_prefix else f' xmlns:{atom_prefix}="http://www.w3.org/2005/Atom"'
    a = f"{atom_prefix}:" if atom_prefix else ""
    files["atom"].write(
        f'<?xml version="1.0" encoding="utf-8"?>\n<{a}feed{default} xml:lang="en">\n'
        f"<{a}title>Shape matrix: Atom with xhtml content</{a}title>\n<{a}id>tag:example.org,2026:shapes</{a}id>\n"
        f"<{a}updated>2026-11-28T10:00:00Z</{a}updated>\n"
        f'<{a}link rel="self" href="https://www.example.org/atom.xml"/>\n')
    files["rss1"].write(
        '<?xml version="1.0" encoding="utf-8"?>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"'
        ' xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/"'
        ' xmlns:dcel="http://purl.org/dc/elements/1.1/"'
        ' xmlns:content="http://purl.org/rss/1.0/modules/content/" xmlns:media="http://search.yahoo.com/mrss/">\n'
        '<channel rdf:about="https://www.example.org/">\n<title>Shape matrix: RSS 1.0</title>\n'
        "<link>https://www.example.org/</link>\n<description>Generated</description>\n</channel>\n")
    # A relative feed_url is no http(s) base: the photos stay relative to the feed's folder.
    files["json"].write('{"version":"https://jsonfeed.org/version/1.1","title":"Shape matrix: JSON Feed",'
                        '"feed_url":"feed.json","items":[\n')
    batches = {shape: [] for shape in names}
    for index in range(count):
        state = texts.getstate()
        for shape in names:
            texts.setstate(state)  # every shape gets the same texts and photo for this item
            item = Item(texts, index, photos)
            rng = rngs[shape]
            if shape == "flickr":
                batches[shape].append(flickr(item, rng))
            elif shape == "rss2":
                batches[shape].append(rss2(item, rng))
            elif shape == "atom":
                batches[shape].append(atom(item, rng, atom_prefix))
            elif shape == "rss1":
                text, _ = rss1(item, rng, "dc" if rng.random() < 0.7 else "dcel")
                batches[shape].append(text)
            else:
                batches[shape].append(("," if index else "") + json_item(item, rng) + "\n")
        if len(batches["flickr"]) == 2000 or index == count - 1:
            for shape in names:
                files[shape].write("".join(batches[shape]))
                batches[shape].clear()
    files["flickr"].write("</channel>\n</rss>\n")
    files["rss2"].write("</channel>\n</rss>\n")
    files["atom"].write(f"</{a}feed>\n")
    files["rss1"].write("</rdf:RDF>\n")
    files["json"].write("]}\n")
    for shape, handle in files.items():
        handle.close()
        path = os.path.join(out, names[shape])
        print(f"{path}: {count} items, {os.path.getsize(path)} bytes", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description="Writes the shape matrix's five feeds over OUT_DIR/photos.")
    parser.add_argument("out")
    parser.add_argument("count", type=int, nargs="?", default=100_000)
    parser.add_argument("--seed", type=int, default=20261128)
    arguments = parser.parse_args()
    folder = os.path.join(arguments.out, "photos")
    photos = sorted(name for name in os.listdir(folder) if name.endswith((".jpg", ".png")))
    if not photos:
        sys.exit(f"make-shape-feeds: no photos in {folder}")
    write_feeds(arguments.out, arguments.count, arguments.seed, photos)


if __name__ == "__main__":
    main()
