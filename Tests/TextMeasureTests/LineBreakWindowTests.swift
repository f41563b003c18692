import FeedLayoutTestSupport
import Testing

@testable import TextMeasure

/// A caption cut to a few lines is segmented only as far as its lines can reach: the window's segments must be the
/// whole text's first ones, and a measurement through the window the same as one over the whole text.
@Suite("Break opportunities of a caption's start")
struct LineBreakWindowTests {
    /// Pieces whose breaking depends on context: numbers and their affixes, quotes, brackets, CJK punctuation,
    /// hyphens, emoji sequences, marks, kept newlines, soft hyphens, no-break spaces, and plain words.
    static let pieces: [String] =
        PropertyTests.pieces + [
            "$", "100", "1,000.5", "%", "€", "-", "—", "–", "\u{2010}", "(", "「", "」", "（", "）", "“", "”", "‘", "’",
            "\"",
            "'", "、", "。", "ー", "ぁ", "〜", "!", "?", ":", ";", "/", "#1", "a-b", "x/y", "\n", " ", "  ", "\u{AD}",
            "\u{A0}", "👍🏽", "🇫🇷", "✋🏿", "1️⃣", "ﾗﾞ", "ก", "ไทย", "한국어", "中文字", "עברית-", "e\u{301}",
        ]

    static func randomText(_ generator: inout SplitMix64) -> String {
        (0..<Int.random(in: 1...40, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }
            .joined()
    }

    @Test(arguments: [31 as UInt64, 32, 33, 34])
    func windowSegmentsAreTheWholeTextsFirstOnes(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        let breaker = LineBreakOpportunities()
        var partialWindows = 0
        for _ in 0..<600 {
            let units = TextPreparation.collapse(
                Self.randomText(&generator), preservingNewlines: Bool.random(using: &generator))
            guard !units.isEmpty else { continue }
            let whole = breaker.segments(of: units)
            let minimumEnd = Int.random(in: 0...units.count, using: &generator)
            let (window, coversAll) = breaker.segments(of: units, atLeastUpTo: minimumEnd)
            if coversAll {
                #expect(window == whole)
            } else {
                partialWindows += 1
                #expect(window.last!.end >= minimumEnd)
                #expect(Array(whole.prefix(window.count)) == window, "\(units.map { String($0, radix: 16) })")
            }
        }
        #expect(partialWindows > 200, "the window must end before the text often, or this checks little")
    }

    @Test(arguments: [41 as UInt64, 42, 43])
    func windowedMeasurementsEqualWholeOnes(seed: UInt64) throws {
        var generator = SplitMix64(seed: seed)
        let measurer = try measurer(size: 14)
        for _ in 0..<300 {
            // Long texts in narrow boxes, so the window ends before the text and sometimes grows.
            let text = (0..<Int.random(in: 1...6, using: &generator)).map { _ in Self.randomText(&generator) }
                .joined(separator: " ")
            let width = Double.random(in: 20...300, using: &generator)
            let maxLines = Int.random(in: 1...4, using: &generator)
            // The usual first window, and a small one that must grow.
            let windowed = measurer.measure(
                text, width: width, maxLines: maxLines,
                firstWindow: Bool.random(using: &generator) ? nil : Int.random(in: 1...24, using: &generator))
            let whole = measurer.measure(text, width: width, maxLines: maxLines, firstWindow: 0)
            #expect(windowed.lines == whole.lines)
            #expect(windowed.height == whole.height)
            #expect(windowed.width == whole.width)
            #expect(windowed.truncated == whole.truncated)
            #expect(windowed.lineTexts == whole.lineTexts, "\(text.debugDescription) at \(width) px, \(maxLines) lines")
        }
    }
}
