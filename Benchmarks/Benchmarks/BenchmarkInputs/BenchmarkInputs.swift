import Foundation

/// Inputs shared by the benchmark targets, built from the repository's own sample feed and photos so that every
/// run on every machine measures the same bytes (seeded choices, no `random()`).
public enum BenchmarkInputs {
    /// The repository root: this file is at Benchmarks/Benchmarks/BenchmarkInputs/ below it.
    public static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    public static var sampleFeedURL: URL { repositoryRoot.appendingPathComponent("sample-feed/feed.xml") }
    public static var samplePhotosURL: URL { repositoryRoot.appendingPathComponent("sample-feed/photos") }

    /// The sample feed's text; a benchmark without its input must stop loudly, not measure nothing.
    public static func sampleFeedText() -> String {
        do {
            return try String(contentsOf: sampleFeedURL, encoding: .utf8)
        } catch {
            fatalError("cannot read \(sampleFeedURL.path): \(error)")
        }
    }

    /// The sample photos whose headers are valid (corrupt.jpg is there on purpose for the error path), sorted.
    public static func readablePhotoPaths() -> [String] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: samplePhotosURL.path)
        } catch {
            fatalError("cannot list \(samplePhotosURL.path): \(error)")
        }
        let paths = names.filter { ($0.hasSuffix(".jpg") || $0.hasSuffix(".png")) && !$0.contains("corrupt") }.sorted()
            .map { samplePhotosURL.appendingPathComponent($0).path }
        precondition(!paths.isEmpty, "no photos in \(samplePhotosURL.path)")
        return paths
    }

    /// A feed of `itemCount` items drawn (seeded) from the sample feed's items with a readable image, each with a
    /// unique guid: the same construction as Benchmarks/inputs/make-big-feed, so its image references are `photos/…`
    /// relative to the feed's folder.
    public static func bigFeed(itemCount: Int) -> [UInt8] {
        let source = sampleFeedText()
        let head = source[..<source.range(of: "<item>")!.lowerBound]
        var items: [Substring] = []
        var rest = source[...]
        while let start = rest.range(of: "<item>"), let end = rest.range(of: "</item>", range: start.upperBound..<rest.endIndex) {
            let item = rest[start.lowerBound..<end.upperBound]
            if !item.contains("does-not-exist") && !item.contains("corrupt") { items.append(item) }
            rest = rest[end.upperBound...]
        }
        precondition(!items.isEmpty, "no usable items in \(sampleFeedURL.path)")
        var random = SeededRandom(seed: 7)
        var feed = String(head)
        feed.reserveCapacity(itemCount * 600)
        for number in 0..<itemCount {
            let item = items[random.next(items.count)]
            // Replace the guid (there is one per sample item) so that every item has its own id.
            if let open = item.range(of: "<guid"), let close = item.range(of: "</guid>") {
                feed += item[..<open.lowerBound]
                feed += "<guid isPermaLink=\"false\">urn:bench:\(number)</guid>"
                feed += item[close.upperBound...]
            } else {
                feed += item
            }
            feed += "\n"
        }
        feed += "</channel>\n</rss>\n"
        return Array(feed.utf8)
    }

    /// Writes `bigFeed(itemCount:)` as FOLDER/feed.xml beside a copy of the sample photos, in a fresh temporary
    /// folder, and returns the feed's path.
    public static func writeFeedWithPhotos(itemCount: Int) -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "feedlayout-bench-\(getpid())-\(itemCount)")
        do {
            try? FileManager.default.removeItem(at: folder)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: samplePhotosURL, to: folder.appendingPathComponent("photos"))
            let feed = folder.appendingPathComponent("feed.xml")
            try Data(bigFeed(itemCount: itemCount)).write(to: feed)
            return feed.path
        } catch {
            fatalError("cannot write the benchmark feed into \(folder.path): \(error)")
        }
    }

    /// Reads a whole file; a missing input stops the benchmark with its path.
    public static func contents(of path: String) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { fatalError("cannot read \(path)") }
        return Array(data)
    }
}

/// A 64-bit LCG: the same sequence on every platform and run.
public struct SeededRandom {
    private var state: UInt64

    public init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }

    /// A number in 0..<bound.
    public mutating func next(_ bound: Int) -> Int {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int((state >> 33) % UInt64(bound))
    }
}

/// Seconds of a duration, for rates computed inside an iteration.
public func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}
