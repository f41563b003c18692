#!/usr/bin/env python3
"""The probe benchmark's measuring half (Benchmarks/peers/probe runs it inside its venv).

Times, side by side in one run and alternating, over the same files:
  feedlayout probe (release) with --concurrency 16 and --concurrency 1, Python's imagesize and Pillow.
Each tool probes every file in one process per round; the rounds rotate the order so no tool always
runs on a warmer cache. Then: bytes read per image, agreement with Pillow, and remote probing of the
same files from a local HTTP server (requests per image). Writes a Markdown table.
"""
import argparse
import http.server
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time

def timed_program(imports, loop):
    """A peer's timing program: `imports` first (untimed), then `loop` over the paths listed in argv[1], timed, with
    the bytes it read (rchar); prints `ok elapsed bytes`."""
    return imports + r"""
import sys, time
paths = open(sys.argv[1]).read().split("\n")
def rchar():
    for line in open("/proc/self/io"):
        if line.startswith("rchar:"):
            return int(line.split()[1])
before, start = rchar(), time.perf_counter()
ok = 0
""" + loop + r"""
elapsed = time.perf_counter() - start
print(ok, elapsed, rchar() - before)
"""


IMAGESIZE = timed_program("import imagesize\n", r"""
for p in paths:
    w, h = imagesize.get(p)
    ok += w > 0
""")

PILLOW = timed_program("from PIL import Image\n", r"""
for p in paths:
    with Image.open(p) as im:
        w, h = im.size
        o = im.getexif().get(0x0112, 1)
        ok += w > 0
""")

PILLOW_SIZES = r"""
import sys, json
from PIL import Image
out = {}
for p in open(sys.argv[1]).read().split("\n"):
    with Image.open(p) as im:
        w, h = im.size
        o = im.getexif().get(0x0112, 1)
        out[p] = [h, w] if o in (5, 6, 7, 8) else [w, h]
print(json.dumps(out))
"""


FLOOR = "C floor: open + pread 4 KiB + close"


def run(command):
    start = time.perf_counter()
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    return time.perf_counter() - start, result


def cpu_seconds():
    """User plus system CPU time of the finished children so far (all their threads)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class RangeHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    root = "."
    lock = threading.Lock()
    requests = 0
    bytes_sent = 0

    def log_message(self, *args):
        pass

    def do_GET(self):
        with RangeHandler.lock:
            RangeHandler.requests += 1
        path = os.path.join(self.root, os.path.basename(self.path))
        try:
            data = open(path, "rb").read()
        except OSError:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        header = self.headers.get("Range", "")
        if header.startswith("bytes="):
            first, _, last = header[6:].partition("-")
            start = int(first or 0)
            end = min(len(data) - 1, int(last) if last else len(data) - 1)
            body = data[start:end + 1]
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
        else:
            body = data
            self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("ETag", f'"{len(data)}"')
        self.end_headers()
        try:
            self.wfile.write(body)
            with RangeHandler.lock:
                RangeHandler.bytes_sent += len(body)
        except (BrokenPipeError, ConnectionResetError):
            pass


def distinct_files(args):
    """`feedlayout probe FILE...` over distinct files (no file twice), the probe cache on as by default (a folder of
    its own, kept across the rounds, so every round after the first finds what the earlier ones stored) and off,
    against the C floor over the same arguments; the three alternate, each round in another order. Returns the
    table's lines."""
    import tempfile
    files = sorted(os.path.join(args.distinct, name) for name in os.listdir(args.distinct) if name.endswith(".jpg"))
    cache_home = tempfile.mkdtemp(prefix="feedlayout-probe-cache-")
    environment = dict(os.environ, XDG_CACHE_HOME=cache_home)
    tools = {
        "feedlayout probe FILE... (cache on, the default)": [args.binary, "probe"] + files,
        "feedlayout probe --no-cache FILE...": [args.binary, "probe", "--no-cache"] + files,
        "C floor --paths FILE...": [args.floor, "--paths"] + files,
    }
    names = list(tools)
    wall = {name: [] for name in names}
    cpu = {name: [] for name in names}
    rounds = max(args.rounds, 9)
    for round_index in range(rounds):
        for path in files:  # into the page cache, untimed
            with open(path, "rb") as handle:
                handle.read(4096)
        order = names[round_index % len(names):] + names[:round_index % len(names)]
        for name in order:
            before = cpu_seconds()
            start = time.perf_counter()
            result = subprocess.run(tools[name], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=environment)
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(cpu_seconds() - before)
            if result.returncode != 0:
                sys.exit(f"{name} failed: {result.stderr.decode()[:500]}")
        print(f"distinct round {round_index + 1}/{rounds}: " + ", ".join(f"{wall[n][-1]:.3f}s" for n in names),
              file=sys.stderr)
    floor = names[2]
    lines = [
        "",
        f"### {len(files):,} distinct JPEG files as arguments (`Benchmarks/inputs/make-distinct-jpegs.py`)",
        "",
        f"Whole processes, {rounds} rounds, the three in turn (order rotated each round), each round after the files' "
        "first 4 KiB were read into the page cache; medians. Ratio: each round's time ÷ the C floor's in that "
        "round, median (goal of issue 39: ≤ 2× with the cache on).",
        "",
        "| tool | wall, median | CPU, median | ratio to the C floor (wall) | ratio (CPU) |",
        "|---|---:|---:|---:|---:|",
    ]
    for name in names:
        ratios = [ours / base for ours, base in zip(wall[name], wall[floor])]
        cpu_ratio = statistics.median(cpu[name]) / max(statistics.median(cpu[floor]), 1e-9)
        lines.append(f"| {name} | {statistics.median(wall[name]) * 1000:.0f} ms | "
                     f"{statistics.median(cpu[name]) * 1000:.0f} ms | {statistics.median(ratios):.2f}× | "
                     f"{cpu_ratio:.2f}× |")
    lines.append("")
    return lines


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--images", required=True)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--parse", default="")
    parser.add_argument("--floor", default="", help="Benchmarks/peers/probe-floor.c, compiled")
    parser.add_argument("--out", required=True)
    parser.add_argument("--remote-count", type=int, default=1000)
    parser.add_argument("--distinct", default="", help="a folder of distinct JPEGs (make-distinct-jpegs.py)")
    parser.add_argument("--only-distinct", action="store_true", help="measure the distinct-files case alone")
    args = parser.parse_args()
    if args.only_distinct:
        lines = ["# Probe benchmark: distinct files", "",
                 f"Generated by `Benchmarks/peers/probe` (ONLY_DISTINCT=1) on "
                 f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs (shared)."]
        lines += distinct_files(args)
        with open(args.out, "w") as handle:
            handle.write("\n".join(lines))
        print("\n".join(lines))
        return

    files = sorted(os.path.join(args.images, name) for name in os.listdir(args.images) if not name.startswith("."))
    count = len(files)
    list_file = os.path.join(args.images, ".list")
    with open(list_file, "w") as handle:
        handle.write("\n".join(files))
    python = sys.executable
    one_file_list = os.path.join(args.images, ".one")
    with open(one_file_list, "w") as handle:
        handle.write(files[0])
    tools = {
        "feedlayout probe --concurrency 16 --input-list": [
            args.binary, "probe", "--no-cache", "--concurrency", "16", "--input-list", list_file],
        "feedlayout probe --concurrency 1 --input-list": [
            args.binary, "probe", "--no-cache", "--concurrency", "1", "--input-list", list_file],
        "feedlayout probe --concurrency 16, paths as arguments": [
            args.binary, "probe", "--no-cache", "--concurrency", "16"] + files,
        "feedlayout probe, 1 file (process start)": [
            args.binary, "probe", "--no-cache", "--input-list", one_file_list],
        "Python imagesize.get": [python, "-c", IMAGESIZE, list_file],
        "Pillow Image.open + size + getexif": [python, "-c", PILLOW, list_file],
    }
    if args.floor:
        tools[FLOOR] = [args.floor, list_file]
    names = list(tools)
    wall = {name: [] for name in names}
    loop = {name: [] for name in names}
    cpu = {name: [] for name in names}
    rchar = {}
    for round_index in range(args.rounds):
        order = names[round_index % len(names):] + names[:round_index % len(names)]
        for name in order:
            before = cpu_seconds()
            elapsed, result = run(tools[name])
            cpu[name].append(cpu_seconds() - before)
            wall[name].append(elapsed)
            if name.startswith("feedlayout"):
                if result.returncode != 0:
                    sys.exit(f"{name} failed: {result.stderr.decode()[:500]}")
            else:
                ok, loop_time, bytes_read = result.stdout.decode().split()
                if int(ok) != count:
                    sys.exit(f"{name}: only {ok} of {count} files read")
                loop[name].append(float(loop_time))
                rchar[name] = int(bytes_read)
        print(f"round {round_index + 1}/{args.rounds}: " + ", ".join(f"{wall[n][-1]:.3f}s" for n in names), file=sys.stderr)

    # Bytes read and agreement: one more feedlayout run, compared with Pillow's size after orientation.
    _, result = run([args.binary, "probe", "--no-cache", "--concurrency", "16", "--input-list", list_file])
    records = [json.loads(line) for line in result.stdout.decode().splitlines()]
    bytes_read = statistics.mean(record["bytesRead"] for record in records)
    file_size = statistics.mean(os.path.getsize(path) for path in files)
    _, pillow = run([python, "-c", PILLOW_SIZES, list_file])
    expected = json.loads(pillow.stdout)
    disagreements = sum(1 for r in records if [r["displayWidth"], r["displayHeight"]] != expected[r["source"]])

    # Remote: the same files from a local server.
    RangeHandler.root = args.images
    class QuietServer(http.server.ThreadingHTTPServer):
        def handle_error(self, request, client_address):
            pass  # clients cut responses short on purpose once the header is known

    server = QuietServer(("127.0.0.1", 0), RangeHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    port = server.server_address[1]
    remote_files = files[: args.remote_count]
    urls = [f"http://127.0.0.1:{port}/{os.path.basename(path)}" for path in remote_files]
    url_list = os.path.join(args.images, ".urls")
    with open(url_list, "w") as handle:
        handle.write("\n".join(urls))
    remote_elapsed, result = run(
        [args.binary, "probe", "--no-cache", "--allow-private-network", "--concurrency", "16", "--input-list", url_list])
    server.shutdown()
    remote_records = [json.loads(line) for line in result.stdout.decode().splitlines()]
    remote_errors = sum(1 for r in remote_records if "error" in r)
    remote_requests = RangeHandler.requests / len(urls)
    one_request = sum(1 for r in remote_records if r.get("bytesRead", 0) <= 16384)
    remote_bytes = RangeHandler.bytes_sent / len(urls)

    def median(values):
        return statistics.median(values)

    base = median(wall["Python imagesize.get"])
    lines = [
        "# Probe benchmark",
        "",
        f"Generated by `Benchmarks/peers/probe` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"{os.cpu_count()} CPUs (shared with other work while measured). {count} local files "
        f"({sum(1 for f in files if f.endswith('.jpg'))} JPEG, {sum(1 for f in files if f.endswith('.png'))} PNG, "
        f"mean size {file_size / 1024:.0f} KiB), made by `Benchmarks/inputs/make-images.py` (seeded). "
        f"Every tool probes all files in one process per round; {args.rounds} rounds, order rotated each round; "
        "medians. Wall time includes process start (Python's interpreter and imports, our binary's start). "
        "\"Without start\" is Python's own timed loop, and for feedlayout its wall time minus the median of a "
        "one-file run. `--input-list` reads the paths from a file: swift-argument-parser takes ~0.1 ms per "
        "positional argument, more than probing the file, so 2,000 paths as arguments measure the parser. "
        "CPU is user plus system time of the process, all threads (less disturbed by other work than wall "
        "time). The C floor only opens, reads 4 KiB and closes each file, in one thread "
        "(`Benchmarks/peers/probe-floor.c`): no parsing, no output.",
        "",
        "| tool | wall, median | CPU, median | per image | per image without start | vs imagesize (wall) "
        "| vs imagesize (without start) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    start = median(wall["feedlayout probe, 1 file (process start)"])
    base_loop = median(loop["Python imagesize.get"])
    for name in names:
        total = median(wall[name])
        processor = median(cpu[name])
        if name.endswith("(process start)"):
            lines.append(f"| {name} | {total * 1000:.0f} ms | {processor * 1000:.1f} ms | — | — | — | — |")
            continue
        if loop[name]:
            in_loop = median(loop[name])
        else:
            in_loop = max(total - start, 1e-9)
        lines.append(
            f"| {name} | {total * 1000:.0f} ms | {processor * 1000:.1f} ms | {total / count * 1e6:.1f} µs "
            f"| {in_loop / count * 1e6:.1f} µs "
            f"| {base / total:.2f}× | {base_loop / in_loop:.2f}× |")
    lines += [
        "",
        "| measure | value |",
        "|---|---:|",
        f"| bytes read per image, feedlayout (`bytesRead`) | {bytes_read:.0f} |",
    ]
    for name in ["Python imagesize.get", "Pillow Image.open + size + getexif"]:
        lines.append(f"| bytes read per image, {name} (`rchar`) | {rchar[name] / count:.0f} |")
    lines += [
        f"| mean file size | {file_size:.0f} |",
        f"| display sizes disagreeing with Pillow (size, orientation applied) | {disagreements} of {count} |",
    ]
    if args.parse:
        lines.append(f"| in-memory header parse per JPEG (`-O`, {args.parse.split()[1]} files, median) | {args.parse.split()[0]} ns |")
    lines += [
        f"| remote: images probed from a local HTTP server (Range honoured) | {len(urls)} ({remote_errors} errors) |",
        f"| remote: HTTP requests per image | {remote_requests:.3f} |",
        f"| remote: images answered by the first 16 KiB range | {one_request} of {len(urls)} |",
        f"| remote: body bytes sent per image | {remote_bytes:.0f} |",
        f"| remote: wall time, `--concurrency 16` | {remote_elapsed * 1000:.0f} ms ({remote_elapsed / len(urls) * 1e6:.0f} µs per image) |",
        "",
    ]
    if args.distinct and args.floor:
        lines += distinct_files(args)
    with open(args.out, "w") as handle:
        handle.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
