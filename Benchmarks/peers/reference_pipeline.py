#!/usr/bin/env python3
"""The whole `feedlayout layout` job done the ordinary Python way, as the peer of Benchmarks/peers/run.

    reference_pipeline.py FEED --out DIR [--page-size 50]

feedparser reads the feed; per item the image is chosen as feedlayout chooses it (media:content with an image
medium or type, isDefault else the largest; then the largest media:thumbnail; then an image enclosure; then the
first <img> of the description), a local reference resolves against the feed's folder and must stay inside it;
Pillow reads the photo's size and EXIF orientation from its header (5-8 swap width and height); Pango (PangoCairo
through python3-gi) measures the title (DejaVu Sans 700, 15 px, at most 2 lines, ellipsis) and the caption (the
description as plain text, capped at 2,000 characters; DejaVu Sans 400, 13 px, at most 3 lines) at the column's
content width with CSS `line-height: normal` of the primary font (ascent and descent rounded, as feedlayout
computes it); the shortest-column rule places each pin in feedlayout's default grid (1024 px wide, columns of at
least 236 px, 16 px insets, gaps and row gaps, 8 px between photo and annotation, 4 px between title and caption);
pages of 50 pins are written as DIR/page-0001.json ... (temporary file, then rename), with the same field names as
feedlayout's pages for the frames, so the two outputs can be compared item by item.

Nothing is cached across items or runs: every item's photo is opened and every text measured, as feedlayout
does with --no-cache. Runs under a Python that has feedparser and Pillow and can import gi (Benchmarks/peers/run
makes a virtualenv with --system-site-packages over Debian's python3-gi).
"""
import argparse
import html.parser
import json
import math
import os
import re
import sys
import time
from urllib.parse import unquote, urlsplit

import feedparser
import gi
from PIL import Image

gi.require_version("Pango", "1.0")
gi.require_version("PangoCairo", "1.0")
import cairo  # noqa: E402
from gi.repository import Pango, PangoCairo  # noqa: E402

# feedlayout's defaults (Sources/feedlayout/Options.swift).
WIDTH, MIN_COLUMN_WIDTH, MIN_COLUMNS = 1024, 236, 2
INSET, COLUMN_GAP, ROW_GAP, CELL_PADDING, ANNOTATION_SPACING = 16, 16, 16, 0, 8
FONT, TITLE_SIZE, TITLE_WEIGHT, TITLE_LINES = "DejaVu Sans", 15, 700, 2
TEXT_SIZE, TEXT_WEIGHT, TEXT_LINES, TITLE_TEXT_GAP = 13, 400, 3, 4
MAX_TEXT_LENGTH = 2000
FALLBACK_ASPECT = 1.0
SWAPPING_ORIENTATIONS = {5, 6, 7, 8}


class Grid:
    """The column geometry, in whole pixels as feedlayout rounds it at scale 1."""

    def __init__(self):
        available = WIDTH - 2 * INSET
        self.columns = max(MIN_COLUMNS, (available + COLUMN_GAP) // (MIN_COLUMN_WIDTH + COLUMN_GAP))
        self.column_width = (available - (self.columns - 1) * COLUMN_GAP) // self.columns
        self.content_width = self.column_width - 2 * CELL_PADDING
        self.column_x = [INSET + column * (self.column_width + COLUMN_GAP) for column in range(self.columns)]


def round_half_away(value):
    return int(math.floor(value + 0.5)) if value >= 0 else -int(math.floor(-value + 0.5))


def device_up(css_pixels):
    """Rounds a text height up to whole pixels (the small allowance keeps 17.000000000000004 at 17)."""
    return 0 if css_pixels <= 0 else int(math.ceil(css_pixels - 1e-7))


# --- text -----------------------------------------------------------------------------------------------------

BLOCKS = {"p", "div", "br", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "tr", "td", "th",
          "table", "pre", "hr", "figure", "figcaption", "section", "article"}


class TextExtractor(html.parser.HTMLParser):
    """HTML to plain text: tags dropped (blocks become spaces), entities decoded, script and style skipped."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts, self.skipping = [], 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self.skipping += 1
        elif tag in BLOCKS:
            self.parts.append(" ")

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self.skipping = max(0, self.skipping - 1)
        elif tag in BLOCKS:
            self.parts.append(" ")

    def handle_data(self, data):
        if not self.skipping:
            self.parts.append(data)


WHITESPACE = re.compile(r"[ \t\n\r\f]+")


def plain_text(markup):
    extractor = TextExtractor()
    extractor.feed(markup)
    extractor.close()
    return WHITESPACE.sub(" ", "".join(extractor.parts)).strip()


class Measurer:
    """One Pango layout per text style, reused for every item (font loaded once, as feedlayout does)."""

    def __init__(self, size, weight, max_lines, content_width):
        context = PangoCairo.FontMap.get_default().create_context()
        options = cairo.FontOptions()
        options.set_hint_metrics(cairo.HINT_METRICS_OFF)
        options.set_hint_style(cairo.HINT_STYLE_NONE)
        PangoCairo.context_set_font_options(context, options)
        context.set_round_glyph_positions(False)
        description = Pango.FontDescription()
        description.set_family(FONT)
        description.set_weight(Pango.Weight(weight))
        description.set_absolute_size(size * Pango.SCALE)
        self.layout = Pango.Layout.new(context)
        self.layout.set_font_description(description)
        # CSS `line-height: normal` as feedlayout (and Blink) computes it for the primary font: ascent and descent
        # rounded separately, plus any line gap. Pango's own default would be the unrounded sum; fallback fonts
        # (CJK, emoji) do not grow the line here, where Blink and feedlayout grow it.
        metrics = context.get_metrics(description, None)
        ascent, descent = metrics.get_ascent() / Pango.SCALE, metrics.get_descent() / Pango.SCALE
        gap = max(0.0, metrics.get_height() / Pango.SCALE - ascent - descent)
        line_height = round_half_away(ascent) + round_half_away(descent) + round_half_away(gap)
        attributes = Pango.AttrList()
        attributes.insert(Pango.attr_line_height_new_absolute(line_height * Pango.SCALE))
        self.layout.set_attributes(attributes)
        self.layout.set_wrap(Pango.WrapMode.WORD_CHAR)
        self.layout.set_width(int(content_width * Pango.SCALE))
        # A negative height is a line limit; with END ellipsizing the last kept line ends in "…".
        self.layout.set_height(-max_lines)
        self.layout.set_ellipsize(Pango.EllipsizeMode.END)

    def measure(self, text):
        """(lines, height in CSS px, truncated) of the text, or None when there is nothing to set."""
        if not text:
            return None
        self.layout.set_text(text, -1)
        lines = self.layout.get_line_count()
        if lines == 0:
            return None
        height = self.layout.get_size()[1] / Pango.SCALE
        return lines, height, self.layout.is_ellipsized()


# --- images ---------------------------------------------------------------------------------------------------

def number(value):
    try:
        return int(str(value).strip().removesuffix("px"))
    except (TypeError, ValueError):
        return None


def is_image(candidate):
    kind = (candidate.get("type") or "").lower()
    if candidate.get("medium") == "image" or kind.startswith("image/"):
        return True
    return not kind and not candidate.get("medium") and re.search(
        r"\.(jpe?g|png|gif|webp|bmp|avif)(\?|$)", candidate.get("url", ""), re.I) is not None


def area(candidate):
    return (number(candidate.get("width")) or 0) * (number(candidate.get("height")) or 0)


class ImgFinder(html.parser.HTMLParser):
    """The first plausible <img> of a description: data-src before src, no data: URIs, no 1×1 pixels."""

    def __init__(self):
        super().__init__()
        self.found = None

    def handle_starttag(self, tag, attrs):
        if self.found or tag != "img":
            return
        values = dict(attrs)
        url = values.get("data-src") or values.get("src") or ""
        if not url or url.startswith("data:") or (values.get("width") == "1" and values.get("height") == "1"):
            return
        self.found = {"url": url, "width": values.get("width"), "height": values.get("height")}


def choose_image(entry):
    contents = [c for c in entry.get("media_content", []) if c.get("url") and is_image(c)]
    if contents:
        defaults = [c for c in contents if str(c.get("isdefault", "")).lower() == "true"]
        return defaults[0] if defaults else max(contents, key=area)  # max keeps the first of equals
    thumbnails = [t for t in entry.get("media_thumbnail", []) if t.get("url")]
    if thumbnails:
        return max(thumbnails, key=area)
    for enclosure in entry.get("enclosures", []):
        if enclosure.get("href") and is_image({"url": enclosure["href"], "type": enclosure.get("type")}):
            return {"url": enclosure["href"]}
    finder = ImgFinder()
    finder.feed(entry.get("summary", ""))
    return finder.found


def local_path(url, feed_directory):
    """The file a local reference names, if it stays inside the feed's folder (as feedlayout requires)."""
    parts = urlsplit(url)
    if parts.scheme in ("http", "https"):
        return None  # this reference pipeline probes local photos only, as the benchmark feed has
    path = unquote(parts.path) if parts.scheme == "file" else url
    resolved = os.path.normpath(os.path.join(feed_directory, path))
    return resolved if resolved.startswith(feed_directory + os.sep) else None


def probe(path):
    """(display width, display height, format, orientation) from the header, or None when unreadable."""
    try:
        with Image.open(path) as image:
            width, height = image.size
            # JPEG: Exif comes from APP1 as the header is read. PNG: an eXIf chunk before IDAT is in info after
            # open; getexif() would decode the pixels to look after IDAT, which feedlayout ignores anyway.
            orientation = 1
            if image.format == "JPEG" or "exif" in image.info:
                orientation = image.getexif().get(0x0112, 1) or 1
            if orientation in SWAPPING_ORIENTATIONS:
                width, height = height, width
            return width, height, image.format.lower(), orientation
    except (OSError, ValueError, SyntaxError):
        return None


# --- placement and pages --------------------------------------------------------------------------------------

def rect(x, y, width, height):
    return {"x": x, "y": y, "width": width, "height": height}


def write_page(directory, index, grid, items, column_heights, content_height):
    page = {
        "schema": "feedlayout.page/1",
        "page": {"index": index, "itemCount": len(items), "firstItem": items[0]["index"],
                 "lastItem": items[-1]["index"], "top": min(item["frame"]["y"] for item in items),
                 "bottom": max(item["frame"]["y"] + item["frame"]["height"] for item in items)},
        "layout": {"width": WIDTH, "columns": grid.columns, "columnWidth": grid.column_width,
                   "contentWidth": grid.content_width, "scale": 1, "direction": "leftToRight",
                   "placement": "shortestFirst"},
        "items": items, "columnHeights": list(column_heights), "contentHeight": content_height,
    }
    path = os.path.join(directory, f"page-{index + 1:04d}.json")
    temporary = path + ".tmp"
    with open(temporary, "w", encoding="utf-8") as file:
        json.dump(page, file, ensure_ascii=False, separators=(",", ":"))
        file.write("\n")
    os.replace(temporary, path)


def run(feed_path, out, page_size):
    started = time.perf_counter()
    feed_directory = os.path.dirname(os.path.abspath(feed_path))
    grid = Grid()
    title_measurer = Measurer(TITLE_SIZE, TITLE_WEIGHT, TITLE_LINES, grid.content_width)
    text_measurer = Measurer(TEXT_SIZE, TEXT_WEIGHT, TEXT_LINES, grid.content_width)
    parsed = feedparser.parse(feed_path)
    if parsed.bozo and not parsed.entries:
        sys.exit(f"reference_pipeline: {feed_path}: not a feed: {parsed.get('bozo_exception')}")
    os.makedirs(out, exist_ok=True)
    heights = [INSET] * grid.columns
    content_bottom = INSET
    page, page_index, failures = [], 0, 0
    for index, entry in enumerate(parsed.entries):
        image = choose_image(entry)
        photo = {"url": image["url"] if image else None}
        size = None
        if image:
            path = local_path(image["url"], feed_directory)
            probed = probe(path) if path else None
            if probed:
                size = probed[:2]
                photo.update(width=probed[0], height=probed[1], sizeFrom="header", format=probed[2],
                             orientation=probed[3])
            else:
                failures += 1
                width, height = number(image.get("width")), number(image.get("height"))
                if width and height and width > 0 and height > 0:
                    size = (width, height)
                    photo.update(width=width, height=height, sizeFrom="declared")
        if size is None:
            size = (FALLBACK_ASPECT, 1.0)
            photo.update(sizeFrom="fallback")

        title_text = WHITESPACE.sub(" ", entry.get("title", "")).strip()
        caption = plain_text(entry.get("summary", ""))[:MAX_TEXT_LENGTH]
        title = title_measurer.measure(title_text)
        text = text_measurer.measure(caption)
        title_height = device_up(title[1]) if title else 0
        text_height = device_up(text[1]) if text else 0
        annotation_height = title_height + text_height + (TITLE_TEXT_GAP if title_height and text_height else 0)

        # Shortest column, leftmost of equals; the photo is the aspect fit into the content width.
        column = heights.index(min(heights))
        top, x = heights[column], grid.column_x[column]
        photo_width = min(grid.content_width, round_half_away(grid.content_width))
        photo_height = round_half_away(grid.content_width * size[1] / size[0])
        annotation_top = top + CELL_PADDING + photo_height + (ANNOTATION_SPACING if annotation_height else 0)
        cell_height = annotation_top + annotation_height + CELL_PADDING - top
        heights[column] = top + cell_height + ROW_GAP
        content_bottom = max(content_bottom, top + cell_height)

        photo["frame"] = rect(x + CELL_PADDING, top + CELL_PADDING, photo_width, photo_height)
        annotation = {"frame": rect(x + CELL_PADDING, annotation_top, grid.content_width, annotation_height)}
        if title:
            annotation["title"] = {"frame": rect(x + CELL_PADDING, annotation_top, grid.content_width, title_height),
                                   "text": title_text, "lines": title[0], "truncated": title[2]}
        if text:
            annotation["text"] = {
                "frame": rect(x + CELL_PADDING, annotation_top + annotation_height - text_height, grid.content_width,
                              text_height),
                "text": caption, "lines": text[0], "truncated": text[2]}
        page.append({"index": index, "id": entry.get("id") or entry.get("link") or str(index),
                     "link": entry.get("link"), "column": column, "columnSpan": 1,
                     "frame": rect(x, top, grid.column_width, cell_height), "photo": photo,
                     "annotation": annotation})
        if len(page) == page_size:
            write_page(out, page_index, grid, page, heights, content_bottom + INSET)
            page, page_index = [], page_index + 1
    if page:
        write_page(out, page_index, grid, page, heights, content_bottom + INSET)
        page_index += 1
    print(f"reference_pipeline: {len(parsed.entries)} items, {page_index} pages, {failures} image failures, "
          f"{time.perf_counter() - started:.2f} s", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("feed")
    parser.add_argument("--out", required=True)
    parser.add_argument("--page-size", type=int, default=50)
    arguments = parser.parse_args()
    run(arguments.feed, arguments.out, arguments.page_size)


if __name__ == "__main__":
    main()
