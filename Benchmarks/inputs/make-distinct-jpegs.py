#!/usr/bin/env python3
"""Writes COUNT distinct JPEG files into DIR, deterministic (seeded), for the probe benchmark's distinct-files case.

    Benchmarks/inputs/make-distinct-jpegs.py DIR [COUNT]

Pillow encodes 100 photos of the make-images.py kind (64-1200 px, baseline and progressive, some with an Exif
orientation); file N is photo N % 100 with a comment segment (COM) naming N right after its start marker, so no two
files have the same bytes and each must be opened and read on its own, as a folder of camera files would be.
"""
import io
import os
import random
import struct
import sys

from PIL import Image


def exif_with_orientation(orientation):
    entries = struct.pack("<HHIHH", 0x0112, 3, 1, orientation, 0)
    ifd = struct.pack("<H", 1) + entries + struct.pack("<I", 0)
    return b"Exif\x00\x00" + b"II*\x00" + struct.pack("<I", 8) + ifd


def main():
    folder = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000
    os.makedirs(folder, exist_ok=True)
    rng = random.Random(20261128)
    bases = []
    for _ in range(100):
        width, height = rng.randrange(64, 1200), rng.randrange(64, 1200)
        base = Image.linear_gradient("L").resize((width, height))
        r, g, b = (rng.randrange(256) for _ in range(3))
        image = Image.merge("RGB", (base.point(lambda v: (v + r) % 256), base.point(lambda v: (v * 2 + g) % 256),
                                    base.point(lambda v: (255 - v + b) % 256)))
        options = {"quality": rng.choice([70, 80, 90]), "progressive": rng.random() < 0.25}
        if rng.random() < 0.3:
            options["exif"] = exif_with_orientation(rng.randrange(1, 9))
        buffer = io.BytesIO()
        image.save(buffer, "JPEG", **options)
        bases.append(buffer.getvalue())
    for index in range(count):
        data = bases[index % len(bases)]
        comment = f"FeedLayout probe benchmark, file {index}".encode()
        segment = b"\xff\xfe" + struct.pack(">H", len(comment) + 2) + comment
        with open(os.path.join(folder, f"photo-{index:05d}.jpg"), "wb") as file:
            file.write(data[:2] + segment + data[2:])
    print(f"{folder}: {count} distinct JPEG files", file=sys.stderr)


if __name__ == "__main__":
    main()
