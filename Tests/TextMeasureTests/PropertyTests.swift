import Testing

@testable import TextMeasure

/// A small deterministic generator (SplitMix64), so failures replay from the seed.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}

@Suite("Invariants over random text")
struct PropertyTests {
    /// Pieces that stress every stage: spaces and controls, marks, surrogate pairs, ZWJ
    /// sequences, soft hyphens, NBSP, CJK punctuation, RTL, long runs without breaks.
    static let pieces: [String] = [
        " ", "  ", "\t", "\n", "\r\n", "\u{1}", "\u{7F}", "a", "word", "longerword", "-", "?", "/", ".", ",",
        "e\u{301}", "😀", "👨‍👩‍👧‍👦", "🇯🇵", "❤️", "\u{AD}", "\u{A0}", "\u{200B}", "\u{2028}", "「", "」", "。",
        "漢", "字", "ラ", "ー", "한", "שלום", "مرحبا", "Привет", "https://example.com/a?b=c",
        String(repeating: "x", count: 40), "\u{FFFD}", "1", "2024", "(", ")",
    ]

    @Test(arguments: [1 as UInt64, 2, 3, 4])
    func layoutInvariantsHold(seed: UInt64) throws {
        var generator = SeededGenerator(state: seed)
        let measure = try measurer(size: 14)
        for _ in 0..<150 {
            let text = (0..<Int.random(in: 0...30, using: &generator))
                .map { _ in Self.pieces.randomElement(using: &generator)! }.joined()
            let width = Double.random(in: 1...400, using: &generator)
            let maxLines = Bool.random(using: &generator) ? Int.random(in: 1...4, using: &generator) : nil
            let result = measure.measure(text, width: width, maxLines: maxLines)
            let content = TextPreparation.collapse(text)
            let visible = content.filter { $0 != TextPreparation.softHyphen }

            #expect(result.lines == result.lineTexts.count, "\(text.debugDescription)")
            // Chromium gives even a lone soft hyphen or ZWSP a line; only collapsed-away
            // text has none.
            #expect((result.lines == 0) == content.isEmpty, "\(text.debugDescription) \(result.lineTexts)")
            if let maxLines { #expect(result.lines <= maxLines) }
            #expect(result.height == Double(result.lines) * measure.lineHeightInPixels || result.lines > 0)
            #expect(result.height >= Double(result.lines) * measure.lineHeightInPixels)
            if !result.truncated {
                // Nothing is lost or invented: the lines are the text minus hanging spaces
                // and soft hyphens, plus the hyphens shown where lines broke at one.
                let joined = result.lineTexts.joined().unicodeScalars.filter { $0 != " " && $0 != "\u{2010}" }
                let expected = String(decoding: visible, as: UTF16.self).unicodeScalars.filter { $0 != " " }
                #expect(
                    String(String.UnicodeScalarView(joined)) == String(String.UnicodeScalarView(expected)),
                    "\(text.debugDescription) at \(width)")
            } else {
                #expect(result.lineTexts.last?.hasSuffix("\u{2026}") == true)
            }
        }
    }
}
