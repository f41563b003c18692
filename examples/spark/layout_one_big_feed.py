#!/usr/bin/env python3
"""Lays out one giant feed on Apache Spark: ranges of its items are prepared in parallel, then placed in one task.

    spark-submit examples/spark/layout_one_big_feed.py FEED OUT_DIR [--binary PATH] [--partitions N]
        [--work DIR] [-- LAYOUT OPTIONS...]

`feedlayout layout` is `feedlayout prepare` (parse, probe the photos, measure the captions: the expensive part,
independent per item) followed by `feedlayout place` (placement and pages: cheap, sequential). The driver cuts
the feed into N ranges with `feedlayout prepare FEED --split N` (one scan of the file's markup, no parsing: each
range begins at an item's line and knows its items' indices and its first line), each Spark task runs
`feedlayout prepare FEED --bytes A..B --items K..M --first-line L`, reading only the feed's head and its own share
(each writes WORK/part-NNNNN.ndjson), then one final task runs `feedlayout place` over the parts in order, writing
OUT_DIR/page-0001.json ... exactly as `feedlayout layout FEED --out OUT_DIR` would, byte for byte, given the same
LAYOUT OPTIONS. A feed that cannot be split by bytes (an http(s) URL, a JSON Feed, XML that is not well-formed
early on) is counted instead (`prepare --count`, a parse on the driver) and split by item indices
(`--items START..END`: every task then parses the feed up to its range).

FEED and WORK must be readable (WORK writable) by every executor: a shared file system, or FEED as an http(s)
URL. The binary and the fonts must be the same on every executor (pages record each font's digest, and `place`
refuses items prepared with other fonts): install them on the image, or ship the binary with
`spark-submit --files feedlayout` and pass `--binary ./feedlayout`. A JSON summary of the run goes to standard
output.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from pyspark.sql import SparkSession


def byte_ranges(binary, feed, partitions, options):
    """The cheap first pass: `feedlayout prepare --split` scans the file's markup and cuts it at items' lines.
    Returns the `prepare` arguments of each range, or None when the feed cannot be split by bytes."""
    if "://" in feed:
        return None
    done = subprocess.run([binary, "prepare", feed, "--split", str(partitions), *options], capture_output=True)
    if done.returncode != 0:
        print(f"{feed}: not split by bytes ({done.stderr.decode(errors='replace').strip()}); splitting by items",
              file=sys.stderr)
        return None
    ranges = [json.loads(line) for line in done.stdout.splitlines()]
    return [["--bytes", r["bytes"], "--items", r["items"], "--first-line", str(r["firstLine"])] for r in ranges]


def item_ranges(binary, feed, partitions, options):
    """The fallback: `feedlayout prepare --count` parses the feed and counts its items; ranges of indices."""
    done = subprocess.run([binary, "prepare", feed, "--count", *options], capture_output=True)
    if done.returncode != 0:
        sys.exit(f"feedlayout prepare --count {feed} failed: {done.stderr.decode(errors='replace').strip()}")
    count = json.loads(done.stdout)["items"]
    partitions = max(1, min(partitions, count or 1))
    bounds = [count * number // partitions for number in range(partitions + 1)]
    return [["--items", f"{bounds[number]}..{bounds[number + 1]}"] for number in range(partitions)]


def main(argv):
    split = argv.index("--") if "--" in argv else len(argv)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("feed", help="the feed: a path every executor can read, or an http(s) URL")
    parser.add_argument("out", help="the folder for the pages (as feedlayout layout --out writes it)")
    parser.add_argument("--binary", default="feedlayout", help="the feedlayout binary on the driver and executors")
    parser.add_argument("--partitions", type=int, default=0, help="ranges to prepare (default: Spark's parallelism)")
    parser.add_argument("--work", help="a shared folder for the prepared parts (default: a temporary folder)")
    args = parser.parse_args(argv[:split])
    options = argv[split + 1:]

    spark = SparkSession.builder.appName("feedlayout: layout one big feed").getOrCreate()
    context = spark.sparkContext
    binary, feed = args.binary, args.feed
    work = args.work or tempfile.mkdtemp(prefix="feedlayout-prepared-")
    os.makedirs(work, exist_ok=True)

    wanted = args.partitions or context.defaultParallelism
    ranges = byte_ranges(binary, feed, wanted, options) or item_ranges(binary, feed, wanted, options)
    partitions = len(ranges)
    tasks = list(enumerate(ranges))

    def prepare(task):
        number, arguments = task
        path = os.path.join(work, f"part-{number:05d}.ndjson")
        with open(path, "wb") as out:
            done = subprocess.run([binary, "prepare", feed, *arguments, *options], stdout=out, stderr=subprocess.PIPE)
        # 1: some photos could not be read (each item says so); anything else is the job's to fix.
        if done.returncode > 1:
            raise RuntimeError(f"feedlayout prepare {' '.join(arguments)}: {done.stderr.decode(errors='replace')}")
        return number, path, done.returncode

    prepared = sorted(context.parallelize(tasks, partitions).map(prepare).collect())
    parts = [path for _, path, _ in prepared]

    def place(paths):
        done = subprocess.run([binary, "place", *paths, "--out", args.out, "--quiet", *options],
                              stderr=subprocess.PIPE)
        if done.returncode > 1:
            raise RuntimeError(f"feedlayout place: {done.stderr.decode(errors='replace')}")
        return done.returncode

    # Placement is sequential: one final task, over every part in order.
    placed = context.parallelize([parts], 1).map(place).collect()[0]
    pages = sum(1 for _, _, names in os.walk(args.out) for name in names if name.startswith("page-"))
    items = sum(1 for path in parts for _ in open(path, "rb"))
    split_by = "bytes" if ranges[0][0] == "--bytes" else "items"
    summary = {"feed": feed, "items": items, "partitions": partitions, "splitBy": split_by, "pages": pages,
               "someImagesFailed": placed == 1 or any(code == 1 for _, _, code in prepared), "parts": parts}
    # The summary goes to standard output: OUT_DIR holds exactly what feedlayout layout --out would.
    print(json.dumps(summary))
    print(f"{feed}: {items} items prepared in {partitions} ranges (split by {split_by}), {pages} pages -> {args.out}",
          file=sys.stderr)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
