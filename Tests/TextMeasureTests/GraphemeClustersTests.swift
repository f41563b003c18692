import FeedLayoutTestSupport
import Testing

@testable import TextMeasure

/// `GraphemeClusters` must split text exactly as `String` does: its table of lone-standing code points is checked
/// against `String` code point by code point, and its splitting on random text that mixes them with everything else.
@Suite("Grapheme clusters without String")
struct GraphemeClustersTests {
    /// What `String` says: the end offset of each `Character`.
    static func stringEnds(_ units: [UInt16]) -> [Int] {
        var offset = 0
        return String(decoding: units, as: UTF16.self).map { character in
            offset += character.utf16.count
            return offset
        }
    }

    static func ends(_ units: [UInt16]) -> [Int] {
        units.withUnsafeBufferPointer { GraphemeClusters.ends($0, 0..<$0.count) }
    }

    /// Neighbours of every kind of lone-standing code point, and of none: letters, an ideograph, two Hangul
    /// syllables (LV, LVT), a pictograph, a control, the soft hyphen.
    static let neighbours: [UInt16] = [0x61, 0xE9, 0x416, 0x4E2D, 0xAC00, 0xAC01, 0x263A, 0x09, 0xAD, 0x3002, 0xFF01]

    @Test func everyLoneStandingCodePointStandsAloneBesideTheOthers() {
        var checked = 0
        for range in GraphemeClusters.standAloneRanges {
            for unit in range {
                #expect(GraphemeClusters.standsAlone(unit))
                for neighbour in Self.neighbours + [unit] {
                    for pair in [[unit, neighbour], [neighbour, unit]] where Self.stringEnds(pair) != [1, 2] {
                        Issue.record("U+\(String(unit, radix: 16)) joins its neighbour in \(pair)")
                    }
                }
                checked += 1
            }
        }
        #expect(checked > 40_000)
    }

    @Test func leftOutCodePointsDoNotStandAlone() {
        // Each joins a neighbour: CR before LF, combining marks, ZWJ, Hangul jamo, halfwidth voicing marks, a
        // Prepend (Arabic number sign), a spacing mark (Devanagari vowel sign).
        for unit: UInt16 in [0x0D, 0x0A, 0x300, 0x483, 0x200D, 0x1100, 0x1161, 0x11A8, 0xFF9E, 0x600, 0x93E, 0x302A] {
            #expect(!GraphemeClusters.standsAlone(unit), "U+\(String(unit, radix: 16))")
        }
    }

    /// Pieces that join in every way UAX #29 knows, between pieces that stand alone.
    static let pieces: [String] = [
        "a", "Z", " ", "\t", "\r", "\n", "\r\n", "é", "e\u{301}", "\u{301}", "\u{200D}", "😀", "👨‍👩‍👧‍👦", "🇯🇵", "🇯", "❤️",
        "\u{FE0F}", "👍🏽", "\u{1F3FD}", "\u{AD}", "漢", "字", "ラ", "ﾗﾞ", "\u{FF9E}", "한", "\u{1112}\u{1161}\u{11AB}",
        "\u{1100}", "\u{1161}", "\u{11A8}", "가", "각", "ק", "مرحبا", "\u{600}", "\u{600}1", "क्षि", "\u{94D}",
        "ก", "\u{E33}", "ำ", "☺", "☺\u{200D}☺", "Привет", "\u{483}", "。", "\u{302A}", "\u{1F1E6}\u{1F1E8}\u{1F1E6}",
    ]

    @Test func scalarsAreStringsScalars() {
        // Random units, lone surrogates included: the same scalars and offsets as `String(decoding:as:)`.
        var generator = SplitMix64(seed: 9)
        let units: [UInt16] = [0x61, 0xE9, 0x4E2D, 0xD83D, 0xDE00, 0xDC00, 0xD800, 0x20, 0xFFFD]
        for _ in 0..<2_000 {
            let text = (0..<Int.random(in: 0...10, using: &generator)).map { _ in
                units.randomElement(using: &generator)!
            }
            var expected: [(Int, UInt32)] = []
            var offset = 0
            for scalar in String(decoding: text, as: UTF16.self).unicodeScalars {
                expected.append((offset, scalar.value))
                // String repairs a lone surrogate to one U+FFFD per unit.
                offset += scalar.value == 0xFFFD ? 1 : scalar.utf16.count
            }
            var actual: [(Int, UInt32)] = []
            text.withUnsafeBufferPointer { buffer in
                TextPreparation.forEachScalar(in: buffer) { offset, value in
                    actual.append((offset, value))
                    return true
                }
            }
            #expect(actual.map(\.0) == expected.map(\.0) && actual.map(\.1) == expected.map(\.1), "\(text)")
        }
    }

    @Test(arguments: [1 as UInt64, 2, 3, 4, 5, 6])
    func splitsRandomTextAsStringDoes(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        for _ in 0..<500 {
            let text = (0..<Int.random(in: 0...12, using: &generator))
                .map { _ in Self.pieces.randomElement(using: &generator)! }.joined()
            let units = Array(text.utf16)
            #expect(Self.ends(units) == Self.stringEnds(units), "\(units.map { String($0, radix: 16) })")
            // Any slice too: the splitting must not depend on what comes before the range.
            if units.count > 2 {
                let start = Int.random(in: 0..<units.count, using: &generator)
                let end = Int.random(in: start...units.count, using: &generator)
                let expected = Self.stringEnds(Array(units[start..<end])).map { $0 + start }
                let actual = units.withUnsafeBufferPointer { GraphemeClusters.ends($0, start..<end) }
                #expect(actual == expected)
            }
        }
    }
}
