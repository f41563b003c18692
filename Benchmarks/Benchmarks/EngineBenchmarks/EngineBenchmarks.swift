import Benchmark
import FeedIngest
import FeedLayout
import TextMeasure
import WaterfallLayout

/// Photo sizes and annotation heights of a typical photo feed, the same on every run (an LCG, not `random()`).
func typicalItems(_ count: Int) -> [WaterfallItem] {
    var state: UInt64 = 0x2545_F491_4F6C_DD1D
    func next(_ bound: Int) -> Int {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int((state >> 33) % UInt64(bound))
    }
    return (0..<count).map { _ in
        WaterfallItem(
            photoSize: Size(width: Double(400 + next(3600)), height: Double(300 + next(4700))),
            annotationHeight: [0, 18, 33, 48, 63][next(5)])
    }
}

let fiveColumns = WaterfallConfiguration(
    containerWidth: 1280, columns: .fixed(5), insets: Insets(all: 16), columnGap: 16, rowGap: 16, cellPadding: 6,
    annotationSpacing: 8)

/// Pages as the pipeline hands them to the writer: 50 items each, with titles, captions, URLs and a warning now
/// and then, so the writer does the work it does on real feeds.
func typicalPages(_ pageCount: Int) -> (pages: [LayoutPage], grid: WaterfallGrid) {
    var engine = try! WaterfallEngine(configuration: fiveColumns)
    let items = typicalItems(pageCount * 50)
    let caption = "Sunset over the harbour, with boats coming home after a long day at sea; gulls circle overhead. 🌅"
    // The standard font lists, as every page records them.
    let fonts = try! LayoutFonts(AnnotationStyle())
    var pages: [LayoutPage] = []
    for page in 0..<pageCount {
        let laidOut = (0..<50).map { offset -> LaidOutItem in
            let index = page * 50 + offset
            let placed = engine.place(items[index])
            let measurement = TextMeasurement(lines: 2, height: 30, width: 230, truncated: false, lineTexts: [])
            return LaidOutItem(
                index: index, id: "https://example.com/pins/\(index)", link: "https://example.com/pins/\(index)",
                placed: placed,
                photo: ResolvedPhoto(
                    url: "https://images.example.com/\(index).jpg", size: items[index].photoSize, sizeSource: .header,
                    info: nil),
                title: MeasuredText(
                    text: "Photo \(index): harbour at dusk", measurement: measurement, deviceHeight: 18,
                    frame: placed.annotationFrame),
                text: MeasuredText(text: caption, measurement: measurement, deviceHeight: 30, frame: placed.annotationFrame),
                warnings: index % 17 == 0 ? [FeedWarning(code: "imageSizeUnknown", message: "size unknown")] : [])
        }
        let quality = LayoutQuality(items: laidOut.map(\.placed), columnHeights: engine.state.columnHeights, grid: engine.grid)
        pages.append(
            LayoutPage(
                grid: engine.grid, fonts: fonts, index: page, items: laidOut,
                columnHeights: engine.state.columnHeights, contentHeight: engine.contentSize.height,
                cursor: "fl3.AZotIGsFV7qUTfeVMyxrQOwBFI4NBJYLig2HC54N0GdIcB",
                quality: quality, totals: LayoutQualityTotals()))
    }
    return (pages, engine.grid)
}

let megabytesPerSecond = BenchmarkMetric.custom("MB/s", polarity: .prefersLarger, useScalingFactor: false)

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .throughput], warmupIterations: 1, maxDuration: .seconds(10),
        maxIterations: 30, thresholds: [.mallocCountTotal: .init(relative: [.p90: 2.0])])

    // Issue 6: 1,000,000 items in 5 columns placed in at most 100 ms.
    Benchmark("WaterfallPlacement1MItems5Columns") { (benchmark: Benchmark, items: [WaterfallItem]) in
        for _ in benchmark.scaledIterations {
            var engine = try! WaterfallEngine(configuration: fiveColumns)
            for item in items { blackHole(engine.place(item)) }
        }
    } setup: {
        typicalItems(1_000_000)
    }

    // Issue 6: page JSON at 300 MB/s or more. One iteration writes 100 pages of 50 items as NDJSON; the custom
    // metric is the iteration's own MB/s (bytes written ÷ its wall-clock time).
    Benchmark(
        "PageJSONWriting100Pages",
        configuration: .init(metrics: [.wallClock, .cpuTotal, .mallocCountTotal, megabytesPerSecond], maxDuration: .seconds(10))
    ) { (benchmark: Benchmark, input: (pages: [LayoutPage], grid: WaterfallGrid)) in
        for _ in benchmark.scaledIterations {
            let start = ContinuousClock.now
            var json = JSONWriter(reservingCapacity: 1 << 22)
            for page in input.pages {
                Records.write(page, into: &json)
                json.appendRaw("\n")
            }
            let elapsed = ContinuousClock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            benchmark.measurement(megabytesPerSecond, Int(Double(json.count) / seconds / 1e6))
            blackHole(json.count)
        }
    } setup: {
        typicalPages(100)
    }

    // A scrolling client's query: the items in a 1280×900 viewport of a 1,000,000-item layout.
    Benchmark("ViewportQuery1MItems", configuration: .init(metrics: [.wallClock, .mallocCountTotal], scalingFactor: .kilo)) {
        (benchmark: Benchmark, index: WaterfallIndex) in
        var y = 0
        let height = index.frame(ofItem: 999_999)!.maxY
        for _ in benchmark.scaledIterations {
            y = (y &+ 7919 * 97) % height
            blackHole(index.items(intersecting: DeviceRect(x: 0, y: y, width: 1280, height: 900)))
        }
    } setup: {
        var engine = try! WaterfallEngine(configuration: fiveColumns)
        var index = WaterfallIndex(grid: engine.grid)
        for item in typicalItems(1_000_000) { index.insert(engine.place(item)) }
        return index
    }
}
