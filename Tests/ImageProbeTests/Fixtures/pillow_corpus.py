#!/usr/bin/env python3
"""Records Pillow's opinion of any set of image files, for the opt-in corpus test.

    python3 pillow_corpus.py DIR_OR_FILE... > /tmp/corpus.json
    IMAGEPROBE_PILLOW_CORPUS=/tmp/corpus.json swift test --filter ImageProbeTests.PillowAgreementTests

For every .jpg/.jpeg/.png/.gif/.webp/.bmp file: Pillow's size, EXIF orientation (1 when
absent) and whether it is animated, or the error Pillow raised.
"""
import json
import os
import sys

from PIL import Image

Image.MAX_IMAGE_PIXELS = None
EXTENSIONS = (".jpg", ".jpeg", ".png", ".gif", ".webp", ".bmp")


def files(arguments):
    for argument in arguments:
        if os.path.isdir(argument):
            for root, _, names in os.walk(argument):
                for name in sorted(names):
                    if name.lower().endswith(EXTENSIONS):
                        yield os.path.join(root, name)
        else:
            yield argument


opinions = {}
for path in files(sys.argv[1:]):
    try:
        with Image.open(path) as image:
            opinions[os.path.abspath(path)] = {
                "width": image.size[0], "height": image.size[1],
                "orientation": image.getexif().get(0x0112, 1),
                "animated": bool(getattr(image, "is_animated", False)), "format": image.format,
            }
    except Exception as error:
        opinions[os.path.abspath(path)] = {"error": type(error).__name__}
json.dump(opinions, sys.stdout, indent=1, sort_keys=True)
