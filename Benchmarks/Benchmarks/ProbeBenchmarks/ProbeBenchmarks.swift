import Benchmark
import BenchmarkInputs
import ImageProbe

var mallocTolerance: [BenchmarkMetric: BenchmarkThresholds] {
    [.mallocCountTotal: .init(relative: [.p90: 2.0])]
}

/// The first bytes of each image, cut to what the parser examines (what a reader must hold anyway), so that the
/// in-memory benchmark measures parsing rather than cache misses over pixel data never looked at.
func headerPrefixes(_ paths: [String]) -> [[UInt8]] {
    paths.map { path in
        let bytes = Array(BenchmarkInputs.contents(of: path).prefix(64 * 1024))
        let needed = bytes.withUnsafeBytes { raw -> Int in
            switch ImageHeaderParser.parse(raw, isComplete: false) {
            case .info(let info): return info.bytesRead
            case .needMoreBytes, .failure: fatalError("\(path): no header in the first 64 KiB")
            }
        }
        return Array(bytes.prefix(max(needed, 16)))
    }
}

/// One iteration parses, in memory, the header of every image in `paths` once (size, Exif orientation, flags), so
/// the time per image is the iteration's time ÷ `paths.count`.
func headerParseBenchmark(_ name: String, paths: [String]) {
    Benchmark(name, configuration: .init(scalingFactor: .kilo)) { (benchmark: Benchmark, inputs: [[UInt8]]) in
        for _ in benchmark.scaledIterations {
            for input in inputs {
                input.withUnsafeBytes { raw in
                    if case .info(let info) = ImageHeaderParser.parse(raw, isComplete: false) {
                        blackHole(info.displayWidth &+ info.displayHeight)
                    }
                }
            }
        }
    } setup: {
        headerPrefixes(paths)
    }
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .throughput], warmupIterations: 3,
        maxDuration: .seconds(5), maxIterations: 10_000, thresholds: mallocTolerance)

    let jpegs = BenchmarkInputs.readablePhotoPaths().filter { $0.hasSuffix(".jpg") }
    let pngs = BenchmarkInputs.readablePhotoPaths().filter { $0.hasSuffix(".png") }

    // Issue 4: in-memory header parse at most 0.5 µs per JPEG. One iteration parses every readable sample JPEG
    // once (30 files: size, Exif orientation, flags), so the time per JPEG is the iteration's time ÷ 30.
    headerParseBenchmark("JPEGHeaderParseInMemorySamplePhotos", paths: jpegs)
    headerParseBenchmark("PNGHeaderParseInMemorySamplePhotos", paths: pngs)

    // Issue 4's local probing without process start: open, read the first block (more only when the header needs
    // it), parse, close, for every readable sample photo (JPEG and PNG) per iteration.
    Benchmark("LocalImageProberSamplePhotos") { (benchmark: Benchmark, paths: [String]) in
        let prober = LocalImageProber()
        for _ in benchmark.scaledIterations {
            for path in paths {
                let info = try! prober.probe(path: path)
                blackHole(info.displayWidth &+ info.bytesRead)
            }
        }
    } setup: {
        BenchmarkInputs.readablePhotoPaths()
    }
}
