#!/usr/bin/env python3
"""Writes the whole-pipeline benchmark's input: a Flickr-style feed of COUNT pins whose photos are local.

    Benchmarks/inputs/make-pipeline-feed.py OUT_DIR COUNT [--seed N]

The items are make-flickr-feed.py's (same seed, same mix of scripts, HTML captions and Media RSS), with
each `media:content` pointing at one of the photos in OUT_DIR/photos (made by make-images.py:
JPEG and PNG, 64-1200 px, some with an EXIF orientation), chosen with a seeded generator, so OUT_DIR/feed.xml is
the same bytes on every run. The photo paths are relative and the feed has no `xml:base`: they resolve against the
feed's own folder, as RFC 3986 says (never against each item's flickr.com link). The declared width and height
stay Flickr's, as real feeds declare them: the layout must read the real size from the file.

--seed N makes another feed of the same kind (other items, other photo choices), for benchmarks that need several
different feeds (Benchmarks/peers/service-layouts); without it the bytes are those this script always wrote.
"""
import argparse
import importlib.util
import os
import random
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("make_flickr_feed", os.path.join(here, "make-flickr-feed.py"))
generator = importlib.util.module_from_spec(spec)
spec.loader.exec_module(generator)


DEFAULT_SEED = 20261122


def main():
    parser = argparse.ArgumentParser(description="Writes a Flickr-style feed of COUNT pins over OUT_DIR/photos.")
    parser.add_argument("out")
    parser.add_argument("count", type=int)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    arguments = parser.parse_args()
    out, count = arguments.out, arguments.count
    photos = sorted(name for name in os.listdir(os.path.join(out, "photos")) if name.endswith((".jpg", ".png")))
    if not photos:
        sys.exit(f"bench-peers-feed: no photos in {os.path.join(out, 'photos')}")
    # The photo choices have a seed of their own; the default pair is the one this script has always used.
    rng = random.Random(arguments.seed)
    choose = random.Random(8 if arguments.seed == DEFAULT_SEED else arguments.seed + 1)
    content = re.compile(r'<media:content url="[^"]*"')
    with open(os.path.join(out, "feed.xml"), "w", encoding="utf-8", newline="\n") as feed:
        feed.write(generator.HEAD)
        batch = []
        for index in range(count):
            item = generator.item(rng, index)
            batch.append(content.sub(f'<media:content url="photos/{choose.choice(photos)}"', item, count=1))
            if len(batch) == 2000:
                feed.write("".join(batch))
                batch.clear()
        feed.write("".join(batch))
        feed.write(generator.TAIL)
    print(f"{out}/feed.xml: {count} items over {len(photos)} photos", file=sys.stderr)


if __name__ == "__main__":
    main()
