import Benchmark
import BenchmarkInputs
import FeedLayout
import Foundation

/// The pipeline probes and measures in a task group, so allocations vary a little with task scheduling.
var mallocTolerance: [BenchmarkMetric: BenchmarkThresholds] {
    [.mallocCountTotal: .init(relative: [.p90: 5.0])]
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .peakMemoryResident], warmupIterations: 1,
        maxDuration: .seconds(20), maxIterations: 20, thresholds: mallocTolerance)

    // Issue 6's end-to-end job at 1/50 of the 100,000-pin size: 2,000 pins drawn from the sample feed with its
    // photos copied beside the feed (local probing, no cache), measured, placed in the CLI's default 4 columns and
    // written as page files of 50 pins, exactly as `feedlayout layout FEED --out DIR` does.
    Benchmark("LayoutPipeline2000PinsLocalPhotos") { (benchmark: Benchmark, feedPath: String) in
        let out = URL(fileURLWithPath: feedPath).deletingLastPathComponent().appendingPathComponent("pages").path
        for _ in benchmark.scaledIterations {
            do {
                let pipeline = try LayoutPipeline(options: LayoutOptions())
                let writer = try PageWriter(directory: out, pretty: false)
                let summary = try await pipeline.run(feedPath: feedPath) { page in try writer.write(page) }
                try writer.finish()
                precondition(
                    summary.items == 2000 && summary.imageFailures == 0,
                    "\(feedPath): \(summary.items) items, \(summary.imageFailures) image failures")
                blackHole(summary)
            } catch {
                fatalError("\(feedPath): \(error)")
            }
        }
    } setup: {
        BenchmarkInputs.writeFeedWithPhotos(itemCount: 2000)
    } teardown: {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("feedlayout-bench-\(getpid())-2000")
        try? FileManager.default.removeItem(at: folder)
    }
}
