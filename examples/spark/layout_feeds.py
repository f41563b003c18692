#!/usr/bin/env python3
"""Lays out a list of feeds on Apache Spark: every partition pipes its feeds into one `feedlayout layout -`.

    spark-submit examples/spark/layout_feeds.py FEEDS.txt OUT_DIR [--binary PATH] [-- LAYOUT OPTIONS...]

FEEDS.txt holds one feed per line (a path every executor can read, or an http(s) URL); millions of lines are
fine. `feedlayout layout -` reads such a list on standard input and lays the feeds out as the lines arrive, so a
partition costs one process, not one per feed (`rdd.pipe`). Every page is one NDJSON line of the job's output
(`OUT_DIR/pages/part-*`), carrying its `"feed"`; a feed that cannot be laid out is one line
`{"feed": ..., "error": {"code", "message"}}` instead, and never fails the job. OUT_DIR/summary.json counts the
feeds, the pages and the failed feeds with their errors.

The binary and the fonts must be the same on every executor (the pages record each font's digest): install them
on the image, or ship the binary with `spark-submit --files feedlayout` and pass `--binary ./feedlayout`.
"""
import argparse
import json
import os
import shlex
import sys

from pyspark.sql import SparkSession


def main(argv):
    split = argv.index("--") if "--" in argv else len(argv)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("feeds", help="a text file with one feed path or URL per line")
    parser.add_argument("out", help="the job's output folder (must not exist)")
    parser.add_argument("--binary", default="feedlayout", help="the feedlayout binary on the executors")
    parser.add_argument("--partitions", type=int, default=0, help="partitions of the feed list (default: Spark's)")
    args = parser.parse_args(argv[:split])
    options = argv[split + 1:]

    spark = SparkSession.builder.appName("feedlayout: layout feeds").getOrCreate()
    context = spark.sparkContext
    feeds = context.textFile(args.feeds, minPartitions=args.partitions or None)
    feeds = feeds.map(str.strip).filter(lambda line: line and not line.startswith("#"))
    # One `feedlayout layout -` per partition; its exit code is 1 when a feed failed, which is reported in its
    # output, so it must not fail the task (checkCode stays off).
    command = " ".join(shlex.quote(part) for part in [args.binary, "layout", "-", "--quiet", *options])
    pages = feeds.pipe(command, env={"LC_ALL": "C.UTF-8"})
    pages.cache()
    pages.saveAsTextFile(os.path.join(args.out, "pages"))

    def tally(line):
        record = json.loads(line)
        if "error" in record:
            return {"pages": 0, "failed": [{"feed": record["feed"], "error": record["error"]}], "feeds": {record["feed"]}}
        return {"pages": 1, "failed": [], "feeds": {record.get("feed")}}

    def merge(a, b):
        return {"pages": a["pages"] + b["pages"], "failed": a["failed"] + b["failed"], "feeds": a["feeds"] | b["feeds"]}

    empty = {"pages": 0, "failed": [], "feeds": set()}
    totals = pages.map(tally).fold(empty, merge)
    summary = {
        "feeds": feeds.count(),
        "feedsWithPages": len(totals["feeds"] - {f["feed"] for f in totals["failed"]}),
        "pages": totals["pages"],
        "failedFeeds": sorted(totals["failed"], key=lambda f: f["feed"]),
    }
    with open(os.path.join(args.out, "summary.json"), "w") as file:
        json.dump(summary, file, indent=1, ensure_ascii=False)
        file.write("\n")
    print(f"{summary['feeds']} feeds: {summary['pages']} pages, {len(summary['failedFeeds'])} failed "
          f"-> {args.out}", file=sys.stderr)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
