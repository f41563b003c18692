#!/usr/bin/env python3
"""Rebuild sample-feed/ (feed.xml, photos/, SOURCES.md is hand-written) from its sources.

Requirements (all offline-installable):
  Debian packages:  lomiri-wallpapers-16.04 lomiri-wallpapers-20.04 mate-backgrounds optipng
                    (libxml2-utils for `xmllint --noout`, optional; exiftool optional)
      apt-get install -y --no-install-recommends lomiri-wallpapers-16.04 \
          lomiri-wallpapers-20.04 mate-backgrounds optipng libxml2-utils
  PyPI packages:    pillow (tested with 12.x), scikit-image (0.26; only its bundled
                    data files are read, nothing is downloaded)
      python3 -m venv .venv-feed && .venv-feed/bin/pip install pillow scikit-image

Usage:  python3 sample-feed/make-sample-feed.py [OUTDIR]   (default: sample-feed/, the folder it is in)

The output is deterministic for a given Pillow/libjpeg/optipng version.
See sample-feed/SOURCES.md for the provenance and licence of every photo.
"""
import datetime as dt
import os
import random
import shutil
import subprocess
import sys
from xml.sax.saxutils import escape, quoteattr

from PIL import Image, ImageDraw, ImageFilter, ImageOps

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(ROOT, "sample-feed")
PHOTOS = os.path.join(OUT, "photos")

BG = "/usr/share/backgrounds"          # lomiri-wallpapers-16.04 / -20.04
MATE = "/usr/share/backgrounds/mate/nature"  # mate-backgrounds


def skimage_data(name):
    import importlib.util
    spec = importlib.util.find_spec("skimage")
    return os.path.join(os.path.dirname(spec.origin), "data", name)


def crop_to(im, aspect, fx=0.5, fy=0.5):
    """Crop to aspect (w/h) around focus point (fx, fy) in 0..1."""
    if aspect is None:
        return im
    w, h = im.size
    if w / h > aspect:
        nw, nh = round(h * aspect), h
    else:
        nw, nh = w, round(w / aspect)
    x = min(max(round(fx * w - nw / 2), 0), w - nw)
    y = min(max(round(fy * h - nh / 2), 0), h - nh)
    return im.crop((x, y, x + nw, y + nh))


def fit_long(im, long_side):
    w, h = im.size
    if max(w, h) <= long_side:
        return im
    s = long_side / max(w, h)
    return im.resize((max(1, round(w * s)), max(1, round(h * s))), Image.LANCZOS)


# name, source path, aspect (w/h or None), focus x, focus y, long side, special
PHOTO_SPECS = [
    # --- lomiri-wallpapers-16.04 / -20.04 ---
    ("djembe-and-wine.jpg", f"{BG}/Wine_by_Jakkub_Mede.jpg", 2 / 3, .5, .5, 900, "orient6"),
    ("spaniels-at-the-door.jpg", f"{BG}/friends_by_Aitzol_Berasategi.jpg", 2 / 3, .5, .5, 900, None),
    ("mudflat-through-cables-panorama.jpg", f"{BG}/Bridge_by_Sander_Klootwijk.jpg", 3.0, .5, .62, 900, None),
    ("dragonfly-in-the-leaves.jpg", f"{BG}/Dragonfly_by_Bolly.jpg", 1.0, .6, .4, 700, None),
    ("fig-in-red-bowl.jpg", f"{BG}/Picture_0B_by_freespace.jpg", 1.0, .55, .5, 640, None),
    ("paint-brushes.jpg", f"{BG}/Picture_1A_by_freespace.jpg", 3 / 4, .4, .5, 800, None),
    ("aitzgorri-autumn.jpg", f"{BG}/aitzgorri_by_Aitzol_Berasategi.jpg", 3 / 2, .5, .5, 900, None),
    ("paper-bird-and-lamps.jpg", f"{BG}/free_by_Peter_Nerlich.jpg", 4 / 3, .5, .5, 800, None),
    ("forest-stream.jpg", f"{BG}/life_by_Aitzol_Berasategi.jpg", 4 / 5, .5, .5, 800, None),
    ("picos-de-europa.jpg", f"{BG}/picosdeeuropa_by_Aitzol_Berasategi.jpg", 4 / 3, .5, .5, 800, None),
    ("dandelion-meadow-panorama.jpg", f"{BG}/seeding_by_Clements_Engelhardt.jpg", 2.6, .5, .55, 900, None),
    ("sunset-over-the-hills.jpg", f"{BG}/sunset_by_Aitzol_Berasategi.jpg", 3 / 2, .5, .5, 900, "progressive"),
    ("nuthatch-cmyk.jpg", f"{BG}/Kleiber_by_Lukas_Baubkus.jpg", 16 / 9, .5, .5, 880, "cmyk"),
    # --- mate-backgrounds (nature/) ---
    ("water-drop-crown.jpg", f"{MATE}/Aqua.jpg", 16 / 10, .5, .5, 800, None),
    ("leaf-veins.jpg", f"{MATE}/Blinds.jpg", 2 / 3, .5, .5, 750, None),
    ("dune-grass.jpg", f"{MATE}/Dune.jpg", 16 / 10, .5, .5, 800, None),
    ("orange-flower.jpg", f"{MATE}/FreshFlower.jpg", 1.0, .5, .5, 600, None),
    ("marigold.jpg", f"{MATE}/Garden.jpg", 16 / 10, .5, .5, 800, "orient1"),
    ("grass-blades.jpg", f"{MATE}/GreenMeadow.jpg", 9 / 16, .5, .5, 800, None),
    ("ladybird-and-forget-me-nots.jpg", f"{MATE}/LadyBird.jpg", 3 / 4, .8, .4, 800, None),
    ("raindrops-on-leaves.jpg", f"{MATE}/RainDrops.jpg", 4 / 3, .5, .5, 800, None),
    ("storm-over-the-road-panorama.jpg", f"{MATE}/Storm.jpg", 3.2, .5, .55, 900, None),
    ("dandelion-seeds.jpg", f"{MATE}/TwoWings.jpg", 4 / 5, .6, .5, 700, None),
    ("weathered-wood.jpg", f"{MATE}/Wood.jpg", 4 / 3, .5, .5, 640, None),
    ("yellow-flower-rounded.png", f"{MATE}/YellowFlower.jpg", 3 / 2, .6, .5, 600, "alpha"),
    # --- scikit-image bundled data (skimage/data/) ---
    ("espresso.jpg", "skimage:coffee.png", None, .5, .5, 600, None),
    ("chelsea-the-cat.jpg", "skimage:chelsea.png", None, .5, .5, 600, None),
    ("astronaut-eileen-collins.jpg", "skimage:astronaut.png", None, .5, .5, 512, None),
    ("falcon9-on-the-pad.jpg", "skimage:rocket.jpg", 2 / 3, .55, .5, 640, None),
    ("hubble-deep-field.png", "skimage:hubble_deep_field.jpg", None, .5, .5, 600, "interlaced"),
    ("photographer-bw.jpg", "skimage:camera.png", None, .5, .5, 512, "gray"),
    ("pompeii-coins.png", "skimage:coins.png", None, .5, .5, 384, "gray"),
    ("retina-fundus.jpg", "skimage:retina.jpg", None, .5, .5, 560, None),
]


def rounded_vignette_mask(size, radius):
    w, h = size
    m = Image.new("L", size, 0)
    ImageDraw.Draw(m).rounded_rectangle((0, 0, w - 1, h - 1), radius=radius, fill=255)
    # soft vignette: fade the outer ~8% to partial transparency
    v = Image.new("L", size, 0)
    inset = round(min(w, h) * 0.08)
    ImageDraw.Draw(v).rounded_rectangle((inset, inset, w - 1 - inset, h - 1 - inset), radius=radius, fill=255)
    v = v.filter(ImageFilter.GaussianBlur(inset / 2))
    v = v.point(lambda p: 96 + p * (255 - 96) // 255)
    return Image.composite(v, Image.new("L", size, 0), m)


def make_photo(name, src, aspect, fx, fy, long_side, special):
    path = src if not src.startswith("skimage:") else skimage_data(src.split(":", 1)[1])
    im = Image.open(path)
    im = ImageOps.exif_transpose(im)
    if special == "gray":
        im = im.convert("L")
    elif im.mode != "RGB":
        im = im.convert("RGB")
    im = fit_long(crop_to(im, aspect, fx, fy), long_side)
    out = os.path.join(PHOTOS, name)
    if special == "orient6":
        # Store the pixels rotated 90° counter-clockwise and tag Orientation=6
        # ("rotate 90° CW to display"), so the picture DISPLAYS upright.
        stored = im.transpose(Image.ROTATE_90)
        exif = Image.Exif()
        exif[0x0112] = 6
        exif[0x013B] = "Jakub Mede"  # Artist
        stored.save(out, "JPEG", quality=80, exif=exif.tobytes())
    elif special == "orient1":
        exif = Image.Exif()
        exif[0x0112] = 1
        im.save(out, "JPEG", quality=80, exif=exif.tobytes())
    elif special == "progressive":
        im.save(out, "JPEG", quality=80, progressive=True, optimize=True)
    elif special == "cmyk":
        # libjpeg writes an Adobe APP14 marker for CMYK; Pillow stores Adobe-style (inverted) CMYK.
        im.convert("CMYK").save(out, "JPEG", quality=80)
    elif special == "alpha":
        rgba = im.convert("RGBA")
        rgba.putalpha(rounded_vignette_mask(im.size, radius=round(min(im.size) * 0.12)))
        rgba.save(out, "PNG", optimize=True)
    elif special == "interlaced":
        im.save(out, "PNG", optimize=True)
        subprocess.run(["optipng", "-quiet", "-o1", "-i1", "-strip", "all", out], check=True)
    elif name.endswith(".png"):
        im.save(out, "PNG", optimize=True)
    else:
        im.save(out, "JPEG", quality=80, optimize=True)


def make_corrupt():
    """photos/corrupt.jpg: a real JPEG cut off just before its SOF marker."""
    data = open(os.path.join(PHOTOS, "espresso.jpg"), "rb").read()
    i = 2
    while True:  # walk the marker segments up to SOFn
        assert data[i] == 0xFF
        marker = data[i + 1]
        if marker in (0xC0, 0xC1, 0xC2):
            break
        i += 2 + int.from_bytes(data[i + 2:i + 4], "big")
    open(os.path.join(PHOTOS, "corrupt.jpg"), "wb").write(data[:i])


# ---------------------------------------------------------------- the feed
# mode: content (width/height declared), nosize, lie (declares 800x600), enclosure,
#       group (media:group with media:thumbnail + media:content), missing, corrupt
# desc_kind: text (escaped), cdata (HTML in CDATA), escaped-html (HTML escaped as text)
ITEMS = [
    dict(photo="espresso.jpg", title="Espresso", kind="text",
         desc="A double espresso in a red cup on a worn wooden café table.", credit="Rachel Michetti"),
    dict(photo="djembe-and-wine.jpg", title="Feierabend",
         kind="cdata", creator="Jakub Mede",
         desc="Eine <b>Djembe</b> auf dem Sitzsack, dahinter ein Tisch aus Paletten mit Rotwein &amp; Kaffeemühle. "
              "Gemütlicher wird’s nicht. 🍷"),
    dict(photo="spaniels-at-the-door.jpg", title="Two spaniels waiting at the door", mode="lie", kind="text",
         desc="Two cocker spaniels lean out of the open door of a wooden cabin, waiting for someone to come back "
              "with the ball. The one at the bottom has clearly been waiting longer. 🐕🐕",
         creator="Aitzol Berasategi"),
    dict(photo="mudflat-through-cables-panorama.jpg", title="Low tide, through the cables", kind="text",
         desc="Panorama of the mudflats at low tide, seen between the steel cables of a bridge.",
         credit="Sander Klootwijk"),
    dict(photo="chelsea-the-cat.jpg", title="Chelsea", kind="text", desc="Chelsea the cat, unimpressed. 🐈"),
    dict(photo="nuthatch-cmyk.jpg", title="Kleiber (Sitta europaea)", kind="cdata", creator="Lukas Baubkus",
         desc="Ein Kleiber klettert kopfüber den Stamm hinab – das kann in Mitteleuropa nur er. "
              "Größe: etwa 14&nbsp;cm. Gesehen im Stadtwald, früh um halb acht. "
              "<a href=\"https://example.com/voegel/kleiber\">Mehr über Kleiber</a>"),
    dict(photo="aitzgorri-autumn.jpg", title="アイツゴリ山の秋", kind="text",
         desc="バスク地方のアイツゴリ山。紅葉した森と緑の牧草地、その上に石灰岩の稜線が続く。🍂",
         creator="Aitzol Berasategi"),
    dict(photo="astronaut-eileen-collins.jpg", title="Eileen Collins", kind="cdata", credit="NASA",
         desc="Official portrait of astronaut <b>Eileen Collins</b>, the first woman to pilot and later command "
              "a Space Shuttle. 👩‍🚀 🇺🇸"),
    dict(photo="water-drop-crown.jpg", title="Splash", kind="text", mode="nosize",
         desc="A single drop hits still water and throws up a little crown.", credit="Charles Barbin"),
    dict(photo="fig-in-red-bowl.jpg", title="تين في وعاء أحمر", kind="text",
         desc="نصف حبة تين طازجة في وعاء أحمر لامع على سطح من الإسمنت. 🍽️", credit="Trevor \"Freespace\""),
    dict(photo="falcon9-on-the-pad.jpg", title="Falcon 9 before launch", kind="escaped-html", credit="SpaceX",
         desc="Falcon 9 with <b>DSCOVR</b> stands on Launch Complex 40 at Cape Canaveral, lit up at dusk. "
              "Liftoff was on 11 February 2015. 🚀"),
    dict(photo="paint-brushes.jpg", title="Brushes", kind="text",
         desc="A jar of well-used paint brushes, bristles dyed every colour of the last project.",
         creator="Trevor \"Freespace\""),
    dict(photo="storm-over-the-road-panorama.jpg", title="Gewitterfront über der Landstraße", kind="text",
         desc="Schwere Wolken ziehen über die Straße – fünf Minuten später goss es in Strömen. ⛈️",
         credit="Sergey Nazarov"),
    dict(photo="hubble-deep-field.png", title="Hubble eXtreme Deep Field", kind="cdata", credit="NASA/ESA",
         desc="Almost every speck of light in this picture is a <i>galaxy</i>. The eXtreme Deep Field combines "
              "ten years of Hubble exposures of one tiny patch of sky in the constellation Fornax. "
              "Some of these galaxies are seen as they were 13.2 billion years ago. "
              "The whole field is smaller than a grain of sand held at arm’s length. 🔭✨"),
    dict(photo="ladybird-and-forget-me-nots.jpg", title="Marienkäfer", kind="text", mode="enclosure",
         desc="Ein Marienkäfer auf einem Grashalm zwischen Vergissmeinnicht. 🐞", creator="Charles Barbin"),
    dict(photo="photographer-bw.jpg", title="The photographer", kind="text", credit="Lav Varshney",
         desc="A man in a dark coat looks through a camera on a tripod, a campus skyline behind him."),
    dict(photo="does-not-exist.jpg", title="This photo went missing", kind="text",
         desc="The image file for this pin is not in the folder – a layout must still place it, with a placeholder."),
    dict(photo="dandelion-meadow-panorama.jpg", title="Pusteblumen", kind="text", credit="Clemens Engelhardt",
         desc="Eine Wiese voller Pusteblumen im Gegenlicht, kurz vor Sonnenuntergang."),
    dict(photo="forest-stream.jpg", title="森の小川", kind="text", creator="Aitzol Berasategi",
         desc="苔むした岩の間を流れる小川。水の音しか聞こえない。"),
    dict(photo="orange-flower.jpg", title="Orange", kind="text", mode="nosize",
         desc="🧡", credit="Jens Ansorg"),
    dict(photo="pompeii-coins.png", title="Greek coins from Pompeii", kind="cdata", credit="Brooklyn Museum",
         desc="Twenty-four Greek coins found at Pompeii, photographed on grey card. "
              "Collection: <a href=\"https://example.com/museum/coins?id=51611&amp;view=all\">Brooklyn Museum</a>."),
    dict(photo="sunset-over-the-hills.jpg", title="Sunset", kind="text", mode="group", creator="Aitzol Berasategi",
         desc="The sun drops behind the hills above a rocky plateau."),
    dict(photo="dragonfly-in-the-leaves.jpg", title="Libelle im Baum", kind="text", credit="Bolly",
         desc="Eine Libelle ruht an einem Zweig, umgeben von Blättern vor tiefblauem Himmel. Schärfe: zufällig perfekt."),
    dict(photo="retina-fundus.jpg", title="Fundus", kind="text", credit="Mikael Häggström",
         desc="Fundus photograph of a normal left eye: optic disc, macula and retinal vessels."),
    dict(photo="marigold.jpg", title="Tagetes", kind="escaped-html", creator="Charles Barbin",
         desc="Studentenblume im Garten – <b>Tagetes</b> hält Schädlinge fern & sieht dabei gut aus."),
    dict(photo="corrupt.jpg", title="Broken upload", kind="text",
         desc="This file was cut off halfway through the upload: it starts like a JPEG but has no image data."),
    dict(photo="grass-blades.jpg", title="Gras", kind="text", desc="Grün. Sehr grün. 🌱", credit="Timothy Schellhase"),
    dict(photo="picos-de-europa.jpg", title="Picos de Europa", kind="cdata", creator="Aitzol Berasategi",
         desc="Hiking trail through the Picos de Europa, Spain 🇪🇸. Limestone peaks with the last snow, "
              "cows grazing on the pasture below. <b>Route:</b> about 14&nbsp;km, 900&nbsp;m up."),
    dict(photo="raindrops-on-leaves.jpg", title="After the rain", kind="text", credit="blackcombwhistler07",
         desc="Raindrops bead on long green leaves."),
    dict(photo="paper-bird-and-lamps.jpg", title="Vogel unter den Lampen", kind="text", creator="Peter Nerlich",
         desc="Ein kleiner Holzvogel schwebt an einem Faden unter drei runden Lampen. Kitsch? Vielleicht. Schön? Ja."),
    dict(photo="yellow-flower-rounded.png", title="Yellow", kind="text", credit="Charles Barbin",
         desc="A yellow daisy against a dark background — this one is a PNG with rounded, transparent corners "
              "and a soft vignette."),
    dict(photo="leaf-veins.jpg", title="Leaf", kind="text", mode="nosize", creator="Lennart Poettering",
         desc="Backlit green leaf: the veins run like blinds."),
    dict(photo="espresso.jpg", title="コーヒーの時間", kind="text", credit="Rachel Michetti",
         desc="エスプレッソとスプーン。木のテーブルは長年使い込まれている。☕"),
    dict(photo="dune-grass.jpg", title="Dünengras", kind="text", credit="Marco Cogoni",
         desc="Strandhafer auf der Düne, dahinter das Meer. Die Luft schmeckt nach Salz."),
    dict(photo="chelsea-the-cat.jpg", title="Donaudampfschifffahrtsgesellschaftskatzenfotografie", kind="text",
         desc="Katzenfoto mit dem längsten Titel der Welt: "
              "Donaudampfschifffahrtselektrizitätenhauptbetriebswerkbauunterbeamtengesellschaftskatze. "
              "Original: https://example.com/fotos/katzen/chelsea/2026/11/ein-sehr-langer-pfad-ohne-leerzeichen-"
              "damit-der-zeilenumbruch-mitten-im-wort-passieren-muss-chelsea-the-cat-full-resolution-original.png"),
    dict(photo="dandelion-seeds.jpg", title="Two wings", kind="text", credit="Charles Barbin",
         desc="Two dandelion seeds, ready to fly, against an orange blur."),
    dict(photo="weathered-wood.jpg", title="Holz", kind="text", mode="nosize", creator="Jean-François Fortin Tam",
         desc="Verwittertes Holz, fast weiß gebleicht."),
    dict(photo="mudflat-through-cables-panorama.jpg", title="المد والجزر", kind="text",
         desc="أفق واسع عند انحسار المد، يُرى من بين كابلات الجسر الفولاذية. السماء صافية والرمال لامعة.",
         credit="Sander Klootwijk"),
    dict(photo="astronaut-eileen-collins.jpg", title="Commander", kind="text", mode="enclosure", credit="NASA",
         desc="Eileen Collins in her orange launch and entry suit, in front of the US flag."),
    dict(photo="nuthatch-cmyk.jpg", title="Nuthatch", kind="text", credit="Lukas Baubkus",
         desc="The only European bird that climbs down a tree trunk head first. 🐦"),
    dict(photo="falcon9-on-the-pad.jpg", title="T-minus", kind="text", credit="SpaceX",
         desc="Floodlights on the launch pad. 🧑‍🚀🚀🌌"),
    dict(photo="fig-in-red-bowl.jpg", title="Feige", kind="text", creator="Trevor \"Freespace\"",
         desc="Eine halbe Feige in einer roten Schale."),
    dict(photo="spaniels-at-the-door.jpg", title="犬たち", kind="text", creator="Aitzol Berasategi",
         desc="ドアから顔を出す二匹のスパニエル。🐶 ボールはまだ？"),
    dict(photo="storm-over-the-road-panorama.jpg", title="Storm", kind="text",
         desc="Dark clouds over an empty road.", credit="Sergey Nazarov"),
    dict(photo="hubble-deep-field.png", title="ألف مجرة", kind="text", credit="NASA/ESA",
         desc="كل نقطة ضوء تقريبًا في هذه الصورة هي مجرة كاملة. 🌌"),
    dict(photo="djembe-and-wine.jpg", title="Living room", kind="escaped-html", creator="Jakub Mede",
         desc="Djembe on a beanbag, wine & coffee grinder on a <i>pallet</i> table. "
              "Family movie night 👨‍👩‍👧‍👦 starts at eight."),
    dict(photo="photographer-bw.jpg", title="Schwarz & Weiß", kind="text", credit="Lav Varshney",
         desc="Ein Fotograf mit Stativ auf der Wiese vor dem Campus."),
    dict(photo="water-drop-crown.jpg", title="Tropfen", kind="text", credit="Charles Barbin",
         desc="Ein Wassertropfen, eine tausendstel Sekunde nach dem Aufprall. 💧"),
    dict(photo="forest-stream.jpg", title="Stream", kind="text", creator="Aitzol Berasategi",
         desc="A small stream tumbles over mossy rocks in the forest. Cool air, no phone signal, perfect."),
    dict(photo="paint-brushes.jpg", title="筆", kind="text", creator="Trevor \"Freespace\"",
         desc="色とりどりの絵筆。"),
    dict(photo="marigold.jpg", title="Marigold", kind="text", creator="Charles Barbin",
         desc="Red and orange petals of a marigold with a yellow heart."),
    dict(photo="grass-blades.jpg", title="Meadow 🏳️‍🌈", kind="text", credit="Timothy Schellhase",
         desc="Fresh blades of grass, photographed from ground level."),
]

TZS = [dt.timezone.utc, dt.timezone(dt.timedelta(hours=1)), dt.timezone(dt.timedelta(hours=9)),
       dt.timezone(dt.timedelta(hours=-5)), dt.timezone(dt.timedelta(hours=3)), dt.timezone(dt.timedelta(hours=2))]
DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def rfc822(t, gmt=False):
    if gmt:
        t = t.astimezone(dt.timezone.utc)
    z = "GMT" if gmt else t.strftime("%z")
    return f"{DAYS[t.weekday()]}, {t.day:02d} {MONTHS[t.month - 1]} {t.year} {t:%H:%M:%S} {z}"


def media_attrs(it, sizes):
    name = it["photo"]
    typ = "image/png" if name.endswith(".png") else "image/jpeg"
    a = f'url="photos/{name}" type="{typ}" medium="image"'
    mode = it.get("mode", "content")
    if name in sizes and mode in ("content", "group"):
        w, h = sizes[name]
        a += f' width="{w}" height="{h}"'
    elif mode == "lie":
        a += ' width="800" height="600"'
    elif name == "corrupt.jpg":
        a += ' width="640" height="480"'
    return a


def build_feed(sizes):
    rnd = random.Random(20261121)
    t = dt.datetime(2026, 11, 21, 18, 42, 7, tzinfo=dt.timezone.utc)
    L = ['<?xml version="1.0" encoding="UTF-8"?>',
         '<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/" '
         'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:atom="http://www.w3.org/2005/Atom">',
         '<channel>',
         '  <title>FeedLayout sample feed — Fotos, 写真, صور 📷</title>',
         '  <link>https://example.com/pins/</link>',
         '  <atom:link href="https://example.com/pins/feed.xml" rel="self" type="application/rss+xml"/>',
         '  <description>A demo photo feed for FeedLayout: real photographs from Debian and PyPI packages, '
         'captions in English, Deutsch, 日本語 and العربية.</description>',
         '  <language>en</language>',
         f'  <lastBuildDate>{rfc822(t)}</lastBuildDate>',
         '  <generator>sample-feed/make-sample-feed.py</generator>']
    for n, it in enumerate(ITEMS, 1):
        local = t.astimezone(TZS[n % len(TZS)])
        L.append('  <item>')
        L.append(f'    <title>{escape(it["title"])}</title>')
        L.append(f'    <link>https://example.com/pins/{1000 + n}</link>')
        if n % 3 == 0:
            L.append(f'    <guid isPermaLink="false">urn:feedlayout:sample:{1000 + n}</guid>')
        else:
            L.append(f'    <guid>https://example.com/pins/{1000 + n}</guid>')
        L.append(f'    <pubDate>{rfc822(local, gmt=(n % 7 == 4))}</pubDate>')
        d = it["desc"]
        if it["kind"] == "cdata":
            L.append(f'    <description><![CDATA[{d}]]></description>')
        else:  # text and escaped-html are both escaped; escaped-html carries markup
            L.append(f'    <description>{escape(d)}</description>')
        if "creator" in it:
            L.append(f'    <dc:creator>{escape(it["creator"])}</dc:creator>')
        mode = it.get("mode", "content")
        name = it["photo"]
        if mode == "enclosure":
            length = os.path.getsize(os.path.join(PHOTOS, name))
            typ = "image/png" if name.endswith(".png") else "image/jpeg"
            L.append(f'    <enclosure url="photos/{name}" type="{typ}" length="{length}"/>')
        elif mode == "group":
            w, h = sizes[name]
            L.append('    <media:group>')
            L.append(f'      <media:content {media_attrs(it, sizes)} isDefault="true"/>')
            L.append(f'      <media:thumbnail url="photos/{name}" width="{w // 4}" height="{h // 4}"/>')
            L.append('    </media:group>')
        else:
            if "credit" in it:
                L.append(f'    <media:content {media_attrs(it, sizes)}>')
                L.append(f'      <media:credit role="photographer">{escape(it["credit"])}</media:credit>')
                L.append('    </media:content>')
            else:
                L.append(f'    <media:content {media_attrs(it, sizes)}/>')
        if mode in ("enclosure", "group") and "credit" in it:
            L.append(f'    <media:credit role="photographer">{escape(it["credit"])}</media:credit>')
        L.append('  </item>')
        t -= dt.timedelta(minutes=rnd.choice([7, 23, 48, 95, 180, 410, 777, 1333, 2100]), seconds=rnd.randrange(60))
    L += ['</channel>', '</rss>', '']
    return "\n".join(L)


def main():
    if os.path.isdir(PHOTOS):
        shutil.rmtree(PHOTOS)
    os.makedirs(PHOTOS)
    for spec in PHOTO_SPECS:
        make_photo(*spec)
    make_corrupt()
    sizes = {}
    for name in os.listdir(PHOTOS):
        try:
            with Image.open(os.path.join(PHOTOS, name)) as im:
                im = ImageOps.exif_transpose(im)
                sizes[name] = im.size  # display size
        except Exception:
            pass
    with open(os.path.join(OUT, "feed.xml"), "w", encoding="utf-8") as f:
        f.write(build_feed(sizes))
    print(f"{len(ITEMS)} items, {len(PHOTO_SPECS)} photos written to {OUT}")


if __name__ == "__main__":
    main()
