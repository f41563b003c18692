import FeedLayoutTestSupport
import Testing

@testable import TextMeasure

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
        var generator = SplitMix64(seed: seed)
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

@Suite("The ellipsis search's shortcut")
struct ExactPrefixTests {
    /// Shapes a text whole, then each prefix (up to a grapheme boundary) that shaping reports exact on its own: the
    /// widths must be the same. Returns how many prefixes shorter than the text were reported exact.
    static func expectExactPrefixesShapeAlike(_ text: String, fonts: FontSet, size: Double) -> Int {
        let units = Array(text.utf16)
        var boundaries: [Int] = []
        var offset = 0
        for character in text {
            offset += character.utf16.count
            boundaries.append(offset)
        }
        var exactSeen = 0
        units.withUnsafeBufferPointer { buffer in
            let whole = Shaper.measure(
                buffer, range: 0..<units.count, boundaries: boundaries, fontsUpTo: units.count, fonts: fonts,
                reportingExactPrefixes: true)
            for (index, boundary) in boundaries.enumerated() where whole.exactPrefixes[index] {
                // The whole text is exact by construction; only shorter prefixes show the shortcut.
                if boundary < units.count { exactSeen += 1 }
                let alone = Shaper.measure(buffer, range: 0..<boundary, fonts: fonts)
                #expect(alone.width == whole.widths[index], "\(text.debugDescription) up to \(boundary) at \(size) px")
            }
            #expect(whole.exactPrefixes.last == true, "the whole text is its own exact prefix")
        }
        return exactSeen
    }

    /// Where `Shaper.measure` reports a boundary's width as exact, shaping the text up to it on its own gives exactly
    /// that width (the ellipsis search then skips that shaping). Texts mix ligature-prone Latin, kerning pairs, RTL,
    /// CJK (with its Han-kerning features), marks, emoji and fallback fonts; a wrong flag shows as a width difference.
    @Test(arguments: [11 as UInt64, 12, 13, 14, 15, 16])
    func exactPrefixesShapeAlikeAlone(seed: UInt64) throws {
        var generator = SplitMix64(seed: seed)
        let pieces = PropertyTests.pieces + ["ffi", "fl", "AV", "To", "Wa", "office", "e\u{301}e\u{308}", "لا", "ـ"]
        var exactSeen = 0
        for size in [12.0, 14.0, 17.0] {
            let fonts = try measurer(size: size).fonts
            for _ in 0..<120 {
                let text = (0..<Int.random(in: 1...12, using: &generator))
                    .map { _ in pieces.randomElement(using: &generator)! }.joined()
                exactSeen += Self.expectExactPrefixesShapeAlike(text, fonts: fonts, size: size)
            }
        }
        // The shortcut must actually be taken, or this test checks nothing.
        #expect(exactSeen > 500)
    }

    /// The same over CJK text alone: one run in a face with Han kerning, whose `halt` features depend on the
    /// neighbouring marks, so a prefix shaped alone may set its last mark differently.
    @Test(.enabled(if: fontInstalled(for: 0x300C)), arguments: [21 as UInt64, 22, 23])
    func exactPrefixesShapeAlikeAloneWithHanKerning(seed: UInt64) throws {
        var generator = SplitMix64(seed: seed)
        let pieces = [
            "漢", "字", "本", "笑", "は", "ラ", "ー", "「", "」", "『", "』", "（", "）", "。", "、", "，", "．", "：", "；", "！",
            "？", "“", "”", "‘", "’", "・", "　", "【", "】", "〈", "〉",
        ]
        var exactSeen = 0
        for size in [13.0, 16.0, 18.0] {
            let fonts = try measurer(size: size).fonts
            #expect(fonts.face(for: "「".unicodeScalars).hanKerning != nil, "the CJK face trims punctuation")
            for _ in 0..<150 {
                let text = (0..<Int.random(in: 2...16, using: &generator))
                    .map { _ in pieces.randomElement(using: &generator)! }.joined()
                exactSeen += Self.expectExactPrefixesShapeAlike(text, fonts: fonts, size: size)
            }
        }
        #expect(exactSeen > 300)
    }
}
