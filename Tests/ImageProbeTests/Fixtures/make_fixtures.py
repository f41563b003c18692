#!/usr/bin/env python3
"""Generates the ImageProbe test fixtures and records Pillow's opinion of each.

Run from anywhere with Pillow installed:  python3 make_fixtures.py
Writes the small image files next to this script and `pillow.json`, which maps every fixture
to Pillow's size and EXIF orientation (or the error Pillow raised). The Swift tests assert our
own expectations for each file and check agreement with pillow.json, listing every place where
we deliberately disagree with Pillow.

Most fixtures are Pillow-encoded images edited at the byte level: JPEG segments are split by
their lengths, changed and reassembled; PNG chunks are written with correct CRCs unless a
fixture is about a bad CRC.
"""
import base64
import io
import json
import os
import struct
import zlib

from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
written = []


def save(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)
    written.append(name)


# --- JPEG -------------------------------------------------------------------------------------

def pillow_jpeg(size=(6, 4), mode="RGB", **options):
    buffer = io.BytesIO()
    colour = (200, 30, 30) if mode == "RGB" else (10, 200, 30, 40) if mode == "CMYK" else 128
    Image.new(mode, size, colour).save(buffer, "JPEG", quality=90, **options)
    return buffer.getvalue()


def split_jpeg(data):
    """Returns ([(marker, payload)], tail) where tail starts at the SOS marker."""
    assert data[:2] == b"\xff\xd8"
    position, segments = 2, []
    while True:
        assert data[position] == 0xFF
        marker = data[position + 1]
        if marker == 0xDA:
            return segments, data[position:]
        length = struct.unpack(">H", data[position + 2:position + 4])[0]
        segments.append((marker, data[position + 4:position + 2 + length]))
        position += 2 + length


def segment(marker, payload):
    return bytes([0xFF, marker]) + struct.pack(">H", len(payload) + 2) + payload


def join_jpeg(segments, tail, fill=b""):
    return b"\xff\xd8" + b"".join(fill + segment(m, p) for m, p in segments) + tail


def tiff(order, ifd0, ifd0_offset=8, ifd1=None, thumbnail=b""):
    """A TIFF block. ifd0/ifd1: lists of (tag, type, value); type 3 SHORT or 4 LONG, count 1.
    With a thumbnail, IFD1 also gets JPEGInterchangeFormat(Length) pointing at it."""
    e = "<" if order == "II" else ">"

    def directory(entries, next_offset):
        out = struct.pack(e + "H", len(entries))
        for tag, kind, value in sorted(entries):
            raw = struct.pack(e + "H", value) + b"\0\0" if kind == 3 else struct.pack(e + "I", value)
            out += struct.pack(e + "HHI", tag, kind, 1) + raw
        return out + struct.pack(e + "I", next_offset)

    header = order.encode() + struct.pack(e + "HI", 42, ifd0_offset)
    body = header + b"\0" * (ifd0_offset - 8)
    ifd0_size = 2 + 12 * len(ifd0) + 4
    if ifd1 is None:
        return body + directory(ifd0, 0)
    ifd1_offset = ifd0_offset + ifd0_size
    ifd1 = list(ifd1)
    if thumbnail:
        ifd1_size = 2 + 12 * (len(ifd1) + 2) + 4
        thumbnail_offset = ifd1_offset + ifd1_size
        ifd1 += [(0x0201, 4, thumbnail_offset), (0x0202, 4, len(thumbnail))]
    return body + directory(ifd0, ifd1_offset) + directory(ifd1, 0) + thumbnail


def exif_app1(tiff_bytes):
    return (0xE1, b"Exif\0\0" + tiff_bytes)


def orientation_entry(value):
    return (0x0112, 3, value)


def with_segments(base, before_sof=(), after_sof=(), fill=b""):
    segments, tail = split_jpeg(base)
    out = []
    for marker, payload in segments:
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            out += list(before_sof) + [(marker, payload)] + list(after_sof)
        else:
            out.append((marker, payload))
    # Keep APP0 first, as real files do, by moving inserted APPn segments just after it.
    return join_jpeg(out, tail, fill)


def insert_after_app0(base, new_segments):
    segments, tail = split_jpeg(base)
    return join_jpeg(segments[:1] + list(new_segments) + segments[1:], tail)


def patch_sof(base, marker=None, precision=None, width=None, height=None):
    segments, tail = split_jpeg(base)
    out = []
    for m, p in segments:
        if m == 0xC0:
            p = bytearray(p)
            if precision is not None:
                p[0] = precision
            if height is not None:
                p[1:3] = struct.pack(">H", height)
            if width is not None:
                p[3:5] = struct.pack(">H", width)
            m = marker if marker is not None else m
            p = bytes(p)
        out.append((m, p))
    return join_jpeg(out, tail)


def sof_offset(data):
    segments, _ = split_jpeg(data)
    position = 2
    for marker, payload in segments:
        if marker in (0xC0, 0xC2):
            return position
        position += 4 + len(payload)
    raise ValueError("no SOF")


base = pillow_jpeg()
save("jpeg-baseline.jpg", base)
for order, tag in (("II", "le"), ("MM", "be")):
    for value in range(1, 9):
        save(f"jpeg-orientation-{value}-{tag}.jpg",
             insert_after_app0(base, [exif_app1(tiff(order, [orientation_entry(value)]))]))
save("jpeg-ifd0-far-offset.jpg",
     insert_after_app0(base, [exif_app1(tiff("MM", [(0x010F, 3, 1), orientation_entry(6)], ifd0_offset=120))]))
save("jpeg-exif-after-sof.jpg", with_segments(base, after_sof=[exif_app1(tiff("II", [orientation_entry(8)]))]))
thumbnail = pillow_jpeg(size=(160, 120))
save("jpeg-thumbnail-sof-in-exif.jpg", insert_after_app0(base, [exif_app1(
    tiff("II", [orientation_entry(3)], ifd1=[orientation_entry(6)], thumbnail=thumbnail))]))
save("jpeg-orientation-only-in-ifd1.jpg", insert_after_app0(base, [exif_app1(
    tiff("MM", [(0x010F, 3, 1)], ifd1=[orientation_entry(6)], thumbnail=thumbnail))]))
save("jpeg-second-exif-ignored.jpg", insert_after_app0(base, [
    exif_app1(tiff("II", [(0x010F, 3, 1)])), exif_app1(tiff("II", [orientation_entry(6)]))]))
save("jpeg-orientation-invalid.jpg", insert_after_app0(base, [exif_app1(tiff("II", [orientation_entry(9)]))]))
save("jpeg-orientation-long-type.jpg", insert_after_app0(base, [exif_app1(tiff("MM", [(0x0112, 4, 7)]))]))

# MPO: the first frame (6x4) carries an MPF index pointing at a second, larger frame.
second_frame = pillow_jpeg(size=(20, 10))


def mpf_payload(first_size, second_offset_from_mpf):
    e = ">"
    entries_offset = 8 + 2 + 12 * 3 + 4
    index = (struct.pack(e + "H", 3)
             + struct.pack(e + "HHI", 0xB000, 7, 4) + b"0100"
             + struct.pack(e + "HHII", 0xB001, 4, 1, 2)
             + struct.pack(e + "HHII", 0xB002, 7, 32, entries_offset)
             + struct.pack(e + "I", 0))
    entries = (struct.pack(e + "IIIHH", 0x20030000, first_size, 0, 0, 0)
               + struct.pack(e + "IIIHH", 0x00020002, len(second_frame), second_offset_from_mpf, 0, 0))
    return b"MPF\0" + b"MM" + struct.pack(e + "HI", 42, 8) + index + entries


probe_first = insert_after_app0(base, [(0xE2, mpf_payload(0, 0))])
mpf_tiff_start = probe_first.index(b"MPF\0") + 4
first = insert_after_app0(base, [(0xE2, mpf_payload(len(probe_first), len(probe_first) - mpf_tiff_start))])
save("jpeg-mpo.jpg", first + second_frame)

save("jpeg-sof1-extended-12bit.jpg", patch_sof(base, marker=0xC1, precision=12))
save("jpeg-sof2-progressive.jpg", pillow_jpeg(progressive=True))
save("jpeg-sof3-lossless.jpg", patch_sof(base, marker=0xC3))
save("jpeg-sof9-arithmetic.jpg", patch_sof(base, marker=0xC9))
save("jpeg-sof10-progressive-arithmetic.jpg", patch_sof(base, marker=0xCA))
save("jpeg-sof15-lossless-arithmetic.jpg", patch_sof(base, marker=0xCF))
save("jpeg-cmyk-adobe.jpg", pillow_jpeg(mode="CMYK"))
save("jpeg-grayscale.jpg", pillow_jpeg(mode="L"))
save("jpeg-fill-bytes.jpg", with_segments(insert_after_app0(base, [exif_app1(tiff("II", [orientation_entry(5)]))]),
                                          fill=b"\xff\xff\xff"))
segments, tail = split_jpeg(base)
save("jpeg-junk-between-segments.jpg",
     b"\xff\xd8" + segment(*segments[0]) + b"\x00\x12junk" + b"".join(segment(*s) for s in segments[1:]) + tail)
save("jpeg-standalone-markers.jpg",
     b"\xff\xd8" + segment(*segments[0]) + b"\xff\x01\xff\xd0" + b"".join(segment(*s) for s in segments[1:]) + tail)
save("jpeg-segment-length-too-small.jpg", b"\xff\xd8\xff\xe0\x00\x01" + base[4:])
save("jpeg-segment-length-past-end.jpg", b"\xff\xd8\xff\xe1\xff\xf0Exif\0\0" + base[2:200])
save("jpeg-truncated-before-sof.jpg", base[:sof_offset(base) + 5])
save("jpeg-truncated-after-sof.jpg", base[:sof_offset(base) + 40])
save("jpeg-truncated-in-scan.jpg", base[:-2])  # header intact, the EOI missing: libjpeg warns
save("jpeg-height-zero-dnl.jpg", patch_sof(base, height=0))
save("jpeg-huge-dimensions.jpg", patch_sof(base, width=65535, height=65500))

# --- PNG --------------------------------------------------------------------------------------

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def chunk(kind, data, crc=None):
    crc = zlib.crc32(kind + data) if crc is None else crc
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc & 0xFFFFFFFF)


def ihdr(width, height, depth=8, colour=2, interlace=0):
    return chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, interlace))


def raw_rows(width, height, bytes_per_pixel=3):
    return b"".join(b"\0" + bytes([(x * 40 + y * 70) % 256 for x in range(width * bytes_per_pixel)])
                    for y in range(height))


def adam7_data(width, height, bytes_per_pixel=3):
    passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
    out = b""
    for x0, y0, dx, dy in passes:
        columns = len(range(x0, width, dx))
        for y in range(y0, height, dy):
            if columns:
                out += b"\0" + bytes([(x * 40 + y * 70) % 256 for x in range(columns * bytes_per_pixel)])
    return out


def simple_png(width=6, height=4, before_idat=b"", after_idat=b"", prefix=b""):
    return (PNG_SIGNATURE + prefix + ihdr(width, height) + before_idat
            + chunk(b"IDAT", zlib.compress(raw_rows(width, height))) + after_idat + chunk(b"IEND", b""))


def pillow_png(mode, size=(6, 4), **options):
    buffer = io.BytesIO()
    Image.new(mode, size, 200 if mode in ("L", "I;16", "P") else (10, 20, 30)).save(buffer, "PNG", **options)
    return buffer.getvalue()


save("png-rgb.png", pillow_png("RGB"))
save("png-16bit-gray.png", pillow_png("I;16"))
save("png-palette.png", pillow_png("P"))
save("png-interlaced.png", PNG_SIGNATURE + ihdr(7, 5, interlace=1)
     + chunk(b"IDAT", zlib.compress(adam7_data(7, 5))) + chunk(b"IEND", b""))
exif_six = tiff("MM", [orientation_entry(6)])
save("png-exif-before-idat.png", simple_png(before_idat=chunk(b"eXIf", exif_six)))
save("png-exif-after-idat.png", simple_png(after_idat=chunk(b"eXIf", exif_six)))
save("png-exif-with-identifier.png", simple_png(before_idat=chunk(b"eXIf", b"Exif\0\0" + tiff("II", [orientation_entry(7)]))))
save("png-chunk-before-ihdr.png", simple_png(prefix=chunk(b"tEXt", b"Comment\0early")))
save("png-bad-ihdr-crc.png", PNG_SIGNATURE + chunk(b"IHDR", struct.pack(">IIBBBBB", 6, 4, 8, 2, 0, 0, 0), crc=0x12345678)
     + chunk(b"IDAT", zlib.compress(raw_rows(6, 4))) + chunk(b"IEND", b""))
save("png-bad-colour-depth.png", PNG_SIGNATURE + ihdr(6, 4, depth=4, colour=2)
     + chunk(b"IDAT", zlib.compress(raw_rows(6, 4))) + chunk(b"IEND", b""))
save("png-bad-idat-crc.png", PNG_SIGNATURE + ihdr(6, 4)
     + chunk(b"IDAT", zlib.compress(raw_rows(6, 4)), crc=0xDEADBEEF) + chunk(b"IEND", b""))
save("png-huge-dimensions.png", PNG_SIGNATURE + ihdr(2147483647, 2147483647)
     + chunk(b"IDAT", zlib.compress(b"\0" * 16)) + chunk(b"IEND", b""))
save("png-truncated-in-ihdr.png", simple_png()[:20])

# Apple CgBI: the CgBI chunk precedes IHDR; data is BGRA premultiplied, deflated without a zlib header.
cgbi_pixels = raw_rows(5, 3, bytes_per_pixel=4)
raw_deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
save("png-apple-cgbi.png", PNG_SIGNATURE + chunk(b"CgBI", bytes([0x50, 0x00, 0x20, 0x06])) + ihdr(5, 3, colour=6)
     + chunk(b"IDAT", raw_deflate.compress(cgbi_pixels) + raw_deflate.flush()) + chunk(b"IEND", b""))

# APNG: two 6x4 frames on a 6x4 canvas.
frame_rows = zlib.compress(raw_rows(6, 4))
fctl = lambda sequence: chunk(b"fcTL", struct.pack(">IIIIIHHBB", sequence, 6, 4, 0, 0, 1, 10, 0, 0))
save("png-apng.png", PNG_SIGNATURE + ihdr(6, 4) + chunk(b"acTL", struct.pack(">II", 2, 0)) + fctl(0)
     + chunk(b"IDAT", frame_rows) + fctl(1) + chunk(b"fdAT", struct.pack(">I", 2) + frame_rows)
     + chunk(b"IEND", b""))

# --- GIF, WebP, BMP ---------------------------------------------------------------------------

def pillow_bytes(image, fmt, **options):
    buffer = io.BytesIO()
    image.save(buffer, fmt, **options)
    return buffer.getvalue()


# Gradients give ThumbHash something to describe (solid colours have no AC terms).
def gradient(size, alpha=False):
    width, height = size
    image = Image.new("RGBA" if alpha else "RGB", size)
    for y in range(height):
        for x in range(width):
            colour = (255 * x // (width - 1), 255 * y // (height - 1), 255 - 255 * x // (width - 1))
            image.putpixel((x, y), colour + (255 * (x + y) // (width + height - 2),) if alpha else colour)
    return image


save("png-gradient.png", pillow_bytes(gradient((40, 30)), "PNG"))
save("png-gradient-alpha.png", pillow_bytes(gradient((30, 40), alpha=True), "PNG"))
large = pillow_bytes(gradient((300, 200)), "JPEG", quality=85)
save("jpeg-gradient.jpg", large)
save("jpeg-gradient-orientation-6.jpg", insert_after_app0(large, [exif_app1(tiff("II", [orientation_entry(6)]))]))

save("gif-static.gif", pillow_bytes(Image.new("P", (6, 4), 3), "GIF"))
frames = [Image.new("RGB", (6, 4), (index * 100, 50, 200 - index * 60)) for index in range(3)]
save("gif-animated.gif", pillow_bytes(frames[0], "GIF", save_all=True, append_images=frames[1:], duration=50, loop=0))
save("gif-truncated-screen.gif", pillow_bytes(Image.new("P", (6, 4), 3), "GIF")[:10])

rgb = Image.new("RGB", (6, 4), (10, 120, 200))
save("webp-lossy.webp", pillow_bytes(rgb, "WEBP", quality=80))
save("webp-lossless.webp", pillow_bytes(rgb, "WEBP", lossless=True))
save("webp-animated.webp", pillow_bytes(rgb, "WEBP", save_all=True,
                                        append_images=[Image.new("RGB", (6, 4), (200, 0, 0))], duration=50))
save("webp-exif.webp", pillow_bytes(rgb, "WEBP", exif=b"Exif\0\0" + tiff("II", [orientation_entry(6)])))

bmp = pillow_bytes(Image.new("RGB", (6, 4), (1, 2, 3)), "BMP")
save("bmp-bottom-up.bmp", bmp)
save("bmp-top-down.bmp", bmp[:22] + struct.pack("<i", -4) + bmp[26:])
core_pixels = b"".join(b"\x01\x02\x03" * 5 + b"\0" for _ in range(2))  # rows padded to 4 bytes
save("bmp-os2-core.bmp", b"BM" + struct.pack("<IHHI", 26 + len(core_pixels), 0, 0, 26)
     + struct.pack("<IHHHH", 12, 5, 2, 1, 24) + core_pixels)

save("unknown-format.bin", b"%PDF-1.7\n" + b"\0" * 40)
save("empty.bin", b"")

# --- Pillow's opinion -------------------------------------------------------------------------

Image.MAX_IMAGE_PIXELS = None  # report huge headers instead of refusing them
opinions = {}
for name in sorted(written):
    try:
        with Image.open(os.path.join(HERE, name)) as image:
            orientation = image.getexif().get(0x0112, 1)
            opinions[name] = {"width": image.size[0], "height": image.size[1], "orientation": orientation,
                              "format": image.format, "animated": bool(getattr(image, "is_animated", False))}
        if name.endswith((".jpg", ".png")):
            try:
                with Image.open(os.path.join(HERE, name)) as image:
                    rgba = image.convert("RGBA")
                    data = rgba.tobytes()
                    pixels = [data[i:i + 4] for i in range(0, len(data), 4)]
                    alpha = sum(p[3] for p in pixels)
                    if alpha:
                        opinions[name]["meanColor"] = [round(sum(p[c] * p[3] for p in pixels) / alpha) for c in range(3)]
            except Exception:  # Pillow could read the header but not the pixels
                pass
        if name.startswith("png-gradient"):
            # The reference ThumbHash of the exact pixels (PNG is lossless, so libpng sees the same).
            from thumbhash.encode import rgba_to_thumbhash
            with Image.open(os.path.join(HERE, name)) as image:
                rgba = image.convert("RGBA")
                opinions[name]["thumbHash"] = base64.b64encode(
                    rgba_to_thumbhash(rgba.width, rgba.height, list(rgba.tobytes()))).decode()
    except Exception as error:  # Pillow's refusal is an opinion too
        opinions[name] = {"error": type(error).__name__}
with open(os.path.join(HERE, "pillow.json"), "w") as f:
    json.dump(opinions, f, indent=1, sort_keys=True)
    f.write("\n")
print(f"wrote {len(written)} fixtures and pillow.json")
