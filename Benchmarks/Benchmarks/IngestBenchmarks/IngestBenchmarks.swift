import Benchmark
import BenchmarkInputs
import FeedIngest

let megabytesPerSecond = BenchmarkMetric.custom("MB/s", polarity: .prefersLarger, useScalingFactor: false)

/// Malloc counts are the same on every run of a deterministic input. The check fails on a deviation beyond the
/// relative tolerance in either direction (fewer allocations too: update the thresholds to keep the gain).
var mallocTolerance: [BenchmarkMetric: BenchmarkThresholds] {
    [.mallocCountTotal: .init(relative: [.p90: 2.0])]
}

/// Parses a feed held in memory in 64 KiB chunks, as `FeedReader.read(path:)` does for files, and returns the
/// item count.
func ingest(_ feed: [UInt8], directory: String) throws -> Int {
    let reader = FeedReader(sourceName: "bench.xml", baseURL: nil, feedDirectory: directory)
    var count = 0
    let chunkSize = 64 * 1024
    try feed.withUnsafeBytes { bytes in
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + chunkSize, bytes.count)
            for item in try reader.consume(UnsafeRawBufferPointer(rebasing: bytes[offset..<end])) {
                blackHole(item)
                count += 1
            }
            offset = end
        }
    }
    for item in try reader.finish() {
        blackHole(item)
        count += 1
    }
    return count
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .throughput, megabytesPerSecond], warmupIterations: 1,
        maxDuration: .seconds(10), maxIterations: 30, thresholds: mallocTolerance)

    // Issue 3's ingest stage without file reads: 8,000 items of the sample feed (about 4 MB, the sample's mix of
    // plain and HTML captions, Media RSS, several scripts). The custom metric is the iteration's MB/s.
    Benchmark("FeedReaderInMemory8000Items") { (benchmark: Benchmark, feed: [UInt8]) in
        let directory = BenchmarkInputs.repositoryRoot.appendingPathComponent("sample-feed").path
        for _ in benchmark.scaledIterations {
            let start = ContinuousClock.now
            let count = try! ingest(feed, directory: directory)
            let elapsed = seconds(ContinuousClock.now - start)
            precondition(count == 8000, "the benchmark feed gave \(count) items, not 8000")
            benchmark.measurement(megabytesPerSecond, Int(Double(feed.count) / elapsed / 1e6))
        }
    } setup: {
        BenchmarkInputs.bigFeed(itemCount: 8000)
    }
}
