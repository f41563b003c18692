import Testing

@testable import TextMeasure

@Suite("Whole measurements are remembered by their measurer")
struct MeasurementCacheTests {
    static let caption = "A very long caption that wraps over several lines of the column and is cut at the second"

    static func measurer(size: Double = 14, cache: MeasurementCache) throws -> TextMeasurer {
        try TextMeasurer(style: TextStyle(font: DejaVuSans.path, size: size), measurements: cache)
    }

    @Test func aRememberedMeasurementIsWhatMeasuringGives() throws {
        let cache = MeasurementCache(byteLimit: 1 << 20)
        let measurer = try Self.measurer(cache: cache)
        // The uncached path (a first window chosen) measures every time.
        let measured = measurer.measure(Self.caption, width: 236, maxLines: 2, firstWindow: nil)
        let first = measurer.measure(Self.caption, width: 236, maxLines: 2)
        let held = cache.heldBytes
        #expect(held > 0)
        let second = measurer.measure(Self.caption, width: 236, maxLines: 2)
        #expect(cache.heldBytes == held, "the second measurement is the remembered one")
        #expect(first == measured && second == measured)
        #expect(second.lineTexts == measured.lineTexts)
        // Another width, another line limit: other entries, measured for themselves.
        let narrower = measurer.measure(Self.caption, width: 120, maxLines: 2)
        let unlimited = measurer.measure(Self.caption, width: 236)
        #expect(cache.heldBytes > held)
        #expect(narrower == measurer.measure(Self.caption, width: 120, maxLines: 2, firstWindow: nil))
        #expect(unlimited == measurer.measure(Self.caption, width: 236, maxLines: nil, firstWindow: nil))
        #expect(narrower.truncated && !unlimited.truncated)
        // Widths that floor to the same LayoutUnit are one entry: the measurement depends on nothing finer.
        let heldBefore = cache.heldBytes
        _ = measurer.measure(Self.caption, width: 236.001, maxLines: 2)
        #expect(cache.heldBytes == heldBefore)
    }

    @Test func measurersSharingACacheKeepTheirOwnEntries() throws {
        let cache = MeasurementCache(byteLimit: 1 << 20)
        let small = try Self.measurer(size: 10, cache: cache)
        let large = try Self.measurer(size: 20, cache: cache)
        let fromSmall = small.measure(Self.caption, width: 200)
        let fromLarge = large.measure(Self.caption, width: 200)
        #expect(fromLarge == large.measure(Self.caption, width: 200, maxLines: nil, firstWindow: nil))
        #expect(fromSmall.lines < fromLarge.lines)
    }

    @Test func canonicallyEquivalentTextsAreNotOneEntry() throws {
        let cache = MeasurementCache(byteLimit: 1 << 20)
        let measurer = try Self.measurer(cache: cache)
        _ = measurer.measure("caf\u{E9} au lait", width: 300)
        let held = cache.heldBytes
        _ = measurer.measure("cafe\u{301} au lait", width: 300)
        #expect(cache.heldBytes > held)
    }

    @Test func theCacheStaysWithinItsBound() throws {
        let limit = 64 * 1024
        let cache = MeasurementCache(byteLimit: limit)
        let measurer = try Self.measurer(cache: cache)
        let longestEntry = 3 * 200 + 160
        for index in 0..<2_000 {
            _ = measurer.measure("caption number \(index) of a feed that never repeats itself", width: 236, maxLines: 2)
            #expect(cache.heldBytes <= limit + longestEntry)
        }
        // What was measured last is still there.
        let held = cache.heldBytes
        _ = measurer.measure("caption number 1999 of a feed that never repeats itself", width: 236, maxLines: 2)
        #expect(cache.heldBytes == held)
        // A text past the longest kept is measured and not kept.
        let long = String(repeating: "word ", count: cache.maximumTextBytes / 5 + 1)
        _ = measurer.measure(long, width: 236, maxLines: 2)
        #expect(cache.heldBytes == held)
        // A cache of no bytes keeps nothing.
        let none = MeasurementCache(byteLimit: 0)
        _ = try Self.measurer(cache: none).measure(Self.caption, width: 236)
        #expect(none.heldBytes == 0)
    }

    @Test func aCacheThatDoesNotEvictKeepsItsFirstEntries() throws {
        let limit = 16 * 1024
        let cache = MeasurementCache(byteLimit: limit, evicts: false)
        let measurer = try Self.measurer(cache: cache)
        _ = measurer.measure("the first caption, which the feed repeats", width: 236)
        for index in 0..<500 {
            _ = measurer.measure("caption number \(index) of a feed that never repeats itself", width: 236)
            #expect(cache.heldBytes <= limit)
        }
        let held = cache.heldBytes
        #expect(held > limit / 2)
        // Full: the first entry is still answered, and nothing new is kept.
        _ = measurer.measure("the first caption, which the feed repeats", width: 236)
        _ = measurer.measure("a caption seen once the cache was full", width: 236)
        #expect(cache.heldBytes == held)
        #expect(
            measurer.measure("the first caption, which the feed repeats", width: 236)
                == measurer.measure(
                    "the first caption, which the feed repeats", width: 236, maxLines: nil, firstWindow: nil))
    }

    /// How many times the cache calls `measure` over a sequence of lookups: what the heldBytes checks above cannot
    /// tell (a miss that replaces an equal entry holds the same bytes).
    static func measuringCalls(_ cache: MeasurementCache, _ texts: [String]) -> Int {
        var calls = 0
        for text in texts {
            _ = cache.measurement(measurer: 1, available: 236 * 64, lineLimit: 2, text: text) {
                calls += 1
                return TextMeasurement(lines: 1, height: 16, width: 10, truncated: false, lineTexts: [text])
            }
        }
        return calls
    }

    @Test func aKnownTextIsNotMeasuredAgain() {
        let cache = MeasurementCache(byteLimit: 1 << 20)
        #expect(Self.measuringCalls(cache, ["a caption", "a caption", "another", "a caption"]) == 2)
        // Another measurer, width or line limit is another entry.
        var calls = 0
        _ = cache.measurement(measurer: 2, available: 236 * 64, lineLimit: 2, text: "a caption") {
            calls += 1
            return TextMeasurement(lines: 1, height: 16, width: 10, truncated: false, lineTexts: [])
        }
        #expect(calls == 1)
    }

    @Test func evictionKeepsWhatWasUsedLatelyAndACacheThatDoesNotEvictKeepsItsFirst() {
        let texts = (0..<400).map { "caption number \($0) of a feed that never repeats itself" }
        // Evicting: the last texts are still there, the first ones were dropped.
        let evicting = MeasurementCache(byteLimit: 16 * 1024)
        _ = Self.measuringCalls(evicting, texts)
        #expect(Self.measuringCalls(evicting, Array(texts.suffix(20))) == 0)
        #expect(Self.measuringCalls(evicting, Array(texts.prefix(20))) == 20)
        // Not evicting: the first texts stay, the last ones were never kept.
        let keeping = MeasurementCache(byteLimit: 16 * 1024, evicts: false)
        _ = Self.measuringCalls(keeping, texts)
        #expect(Self.measuringCalls(keeping, Array(texts.prefix(20))) == 0)
        #expect(Self.measuringCalls(keeping, Array(texts.suffix(20))) == 20)
        // Too long to keep: measured every time.
        let long = String(repeating: "word ", count: keeping.maximumTextBytes / 5 + 1)
        #expect(Self.measuringCalls(MeasurementCache(byteLimit: 1 << 20), [long, long]) == 2)
    }
}
