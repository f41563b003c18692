#!/usr/bin/env python3
"""Writes the probe benchmark's corpus: COUNT images, deterministic (seeded), into DIR.

A mix like a photo feed's: baseline and progressive JPEGs (some with an Exif orientation, a few
with 20-60 KB of Exif before the frame header, as camera files have) and PNGs (some with alpha). Sizes 64-1200 px. Usage: Benchmarks/inputs/make-images.py DIR [COUNT]
"""
import io
import os
import random
import struct
import sys

from PIL import Image


def exif_with_orientation(orientation, padding):
    """A little-endian TIFF block: IFD0 with Orientation, plus `padding` bytes of maker-note-like data."""
    entries = struct.pack("<HHIHH", 0x0112, 3, 1, orientation, 0)
    ifd = struct.pack("<H", 1) + entries + struct.pack("<I", 0)
    return b"Exif\x00\x00" + b"II*\x00" + struct.pack("<I", 8) + ifd + bytes(padding)


def image(rng, width, height, mode):
    base = Image.linear_gradient("L").resize((width, height))
    r, g, b = (rng.randrange(256) for _ in range(3))
    tinted = Image.merge("RGB", (base.point(lambda v: (v + r) % 256), base.point(lambda v: (v * 2 + g) % 256),
                                 base.point(lambda v: (255 - v + b) % 256)))
    if mode == "RGBA":
        tinted = tinted.convert("RGBA")
        tinted.putalpha(base)
    return tinted


def main():
    folder = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    os.makedirs(folder, exist_ok=True)
    rng = random.Random(20261122)
    for index in range(count):
        width, height = rng.randrange(64, 1200), rng.randrange(64, 1200)
        kind = rng.random()
        buffer = io.BytesIO()
        if kind < 0.62:
            options = {"quality": rng.choice([70, 80, 90]), "progressive": rng.random() < 0.25}
            if rng.random() < 0.3:
                padding = rng.randrange(20_000, 60_000) if rng.random() < 0.15 else rng.randrange(0, 2_000)
                options["exif"] = exif_with_orientation(rng.randrange(1, 9), padding)
            image(rng, width, height, "RGB").save(buffer, "JPEG", **options)
            name = f"img-{index:05d}.jpg"
        else:
            mode = "RGBA" if rng.random() < 0.3 else "RGB"
            image(rng, width, height, mode).save(buffer, "PNG", optimize=False, compress_level=1)
            name = f"img-{index:05d}.png"
        with open(os.path.join(folder, name), "wb") as file:
            file.write(buffer.getvalue())


if __name__ == "__main__":
    main()
