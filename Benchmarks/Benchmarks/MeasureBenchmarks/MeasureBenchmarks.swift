import Benchmark
import BenchmarkInputs
import FeedIngest
import TextMeasure

var mallocTolerance: [BenchmarkMetric: BenchmarkThresholds] {
    [.mallocCountTotal: .init(relative: [.p90: 2.0])]
}

/// The sample feed's titles and captions as the layout measures them (plain text after ingest): 10 scripts,
/// emoji, short titles and multi-line captions.
func sampleTexts() -> [String] {
    var texts: [String] = []
    let path = BenchmarkInputs.sampleFeedURL.path
    do {
        _ = try FeedReader.read(path: path) { item in
            if let title = item.title, !title.isEmpty { texts.append(title) }
            if let text = item.text, !text.isEmpty { texts.append(text) }
        }
    } catch {
        fatalError("cannot read \(path): \(error)")
    }
    precondition(texts.count > 50, "\(path) gave only \(texts.count) texts")
    return texts
}

/// The layout's caption style and content width (the CLI defaults: 13 px DejaVu Sans, 236 px columns).
let captionStyle = TextStyle(font: "DejaVu Sans", size: 13, lineHeight: .normal, weight: 400)
let contentWidth = 236.0

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .throughput], warmupIterations: 1,
        maxDuration: .seconds(5), maxIterations: 1_000, thresholds: mallocTolerance)

    // Cold: a new measurer per iteration (font lookup and load, empty shaping cache), then every text once.
    Benchmark("TextMeasurerColdSampleTexts") { (benchmark: Benchmark, texts: [String]) in
        for _ in benchmark.scaledIterations {
            let measurer = try! TextMeasurer(style: captionStyle)
            for text in texts { blackHole(measurer.measure(text, width: contentWidth, maxLines: 3)) }
        }
    } setup: {
        sampleTexts()
    }

    // Warm: one measurer whose caches already hold the texts' segments (issue 5: at most 10 µs per 100
    // characters); one iteration measures every text once.
    Benchmark("TextMeasurerWarmSampleTexts") { (benchmark: Benchmark, input: (TextMeasurer, [String])) in
        let (measurer, texts) = input
        for _ in benchmark.scaledIterations {
            for text in texts { blackHole(measurer.measure(text, width: contentWidth, maxLines: 3)) }
        }
    } setup: {
        let texts = sampleTexts()
        let measurer = try TextMeasurer(style: captionStyle)
        for text in texts { blackHole(measurer.measure(text, width: contentWidth, maxLines: 3)) }
        return (measurer, texts)
    }
}
