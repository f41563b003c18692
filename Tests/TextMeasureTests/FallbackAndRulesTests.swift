import Testing

@testable import TextMeasure

/// Whether the standard fallback fonts are installed (fonts-noto-core, fonts-noto-cjk, fonts-noto-color-emoji, as
/// scripts/install-deps installs them), so tests that need them skip cleanly where they are not.
func fontInstalled(for codePoint: UInt32, emoji: Bool = false) -> Bool {
    guard let fonts = try? TextStyle().resolvedFonts() else { return false }
    return fonts.dropFirst().contains { face in
        (try? LoadedFont(path: face.path, faceIndex: face.faceIndex, size: 14, subpixelPositioning: true))?
            .hasGlyph(for: codePoint) == true
    }
}

@Suite("Font fallback, measured against Chromium")
struct FallbackTests {
    @Test(.enabled(if: fontInstalled(for: 0x6F22)))
    func cjkFallbackGrowsTheNormalLineHeight() throws {
        // Chromium: a div with "漢字" in DejaVu Sans 14 px is 20 px tall (Noto Sans CJK's
        // ascent and descent), "x" alone 16 px.
        let measure = try measurer()
        #expect(measure.measure("漢字", width: 300).height == 20)
        #expect(measure.measure("x", width: 300).height == 16)
        let preLine = try TextMeasurer(style: TextStyle(font: DejaVuSans.path, whiteSpace: .preLine))
        #expect(preLine.measure("x\n漢字\nx", width: 300).height == 16 + 20 + 16)
        // A fixed line height ignores the fallback font's metrics.
        #expect(try measurer(lineHeight: .pixels(18)).measure("漢字", width: 300).height == 18)
    }

    @Test(.enabled(if: fontInstalled(for: 0xD55C)))
    func hangulUsesTheKoreanFace() throws {
        // Chromium 13 px: "한국어" is 35.890625 px wide (the Korean face's proportional
        // Hangul, not the Japanese face's full-width one).
        let measure = try measurer(size: 13)
        #expect(measure.measure("한국어", width: 300).width == 35.890625)
    }

    @Test(.enabled(if: fontInstalled(for: 0x30E9)))
    func kerningAcrossBreakOpportunitiesCounts() throws {
        // Chromium 13 px: "ラーメン" is 51.484375 px: the pair "ーメ" kerns although a line
        // may break between every kana.
        let measure = try measurer(size: 13)
        #expect(measure.measure("ラーメン", width: 300).width == 51.484375)
        // Line-break: auto allows a break before the prolonged sound mark, as Chromium does.
        #expect(measure.measure("ラーメン", width: 20).lineTexts == ["ラ", "ー", "メ", "ン"])
    }

    @Test(.enabled(if: fontInstalled(for: 0x1F389, emoji: true)))
    func emojiUseTheColourFontsStrikeAdvances() throws {
        // Chromium 20 px: ten "🎉" are 249.546875 px (136 px advance at 109 ppem).
        #expect(try measurer(size: 20).measure(String(repeating: "🎉", count: 10), width: 1000).width == 249.546875)
    }

    /// Chromium's heights of a one-line div holding "🎉" (colour emoji fallback) and "x"
    /// in DejaVu Sans, for font sizes 10, 10.25, … 30 px.
    static let chromiumEmojiLineHeights = [
        11, 13, 13, 13, 13, 13, 14, 14, 14, 14, 15, 15, 15, 15, 16, 16, 16, 16, 17, 18, 18, 18, 18, 19, 19, 19, 19, 20,
        20, 20, 20, 20, 21, 21, 22, 22, 23, 23, 23, 23, 24, 24, 24, 24, 24, 25, 25, 25, 25, 26, 26, 27, 27, 28, 28, 28,
        28, 29, 29, 29, 29, 29, 30, 30, 30, 30, 31, 32, 32, 32, 33, 33, 33, 33, 33, 34, 34, 34, 34, 35, 35,
    ]
    static let chromiumTextLineHeights = [
        11, 12, 12, 13, 13, 13, 14, 14, 14, 14, 15, 15, 15, 15, 16, 16, 16, 16, 16, 17, 18, 18, 18, 19, 19, 19, 19, 20,
        20, 20, 20, 20, 21, 21, 21, 21, 22, 23, 23, 23, 24, 24, 24, 24, 24, 25, 25, 25, 25, 26, 26, 26, 26, 27, 28, 28,
        28, 29, 29, 29, 29, 29, 30, 30, 30, 30, 31, 31, 31, 31, 32, 33, 33, 33, 33, 34, 34, 34, 34, 35, 35,
    ]

    @Test(.enabled(if: fontInstalled(for: 0x1F389, emoji: true)))
    func emojiLineHeightsMatchChromiumAtQuarterPixelSizes() throws {
        for (index, expected) in Self.chromiumEmojiLineHeights.enumerated() {
            let size = 10 + Double(index) / 4
            let measure = try measurer(size: size)
            #expect(measure.measure("🎉", width: 500).height == Double(expected), "\(size) px")
            #expect(
                measure.measure("x", width: 500).height == Double(Self.chromiumTextLineHeights[index]), "\(size) px")
        }
    }

    @Test func theAuthorsFontWinsForEmojiItCovers() throws {
        // DejaVu Sans has U+1F600; Chromium 20 px draws ten of them 208.5 px wide with it.
        #expect(try measurer(size: 20).measure(String(repeating: "😀", count: 10), width: 1000).width == 208.5)
    }

    @Test(.enabled(if: fontInstalled(for: 0x2764, emoji: true)))
    func emojiVariationSelectorFallsBackWhenTheFontLacksTheSequence() throws {
        // Chromium 20 px: "❤" ×10 is 167.578125 px (DejaVu), "❤️" ×10 249.546875 (emoji font).
        let measure = try measurer(size: 20)
        #expect(measure.measure(String(repeating: "\u{2764}", count: 10), width: 1000).width == 167.578125)
        #expect(measure.measure(String(repeating: "\u{2764}\u{FE0F}", count: 10), width: 1000).width == 249.546875)
    }
}

@Suite("CJK punctuation, measured against Chromium")
struct CJKPunctuationTests {
    @Test(.enabled(if: fontInstalled(for: 0x300C)))
    func adjacentPunctuationCollapses() throws {
        // Chromium 16 px: 152 px, where ten fullwidth marks and ideographs would be 192.
        #expect(try measurer(size: 16).measure("「本」。（笑）、『本』。", width: 500).width == 152)
    }

    @Test(.enabled(if: fontInstalled(for: 0x300C)))
    func closingBracketIsHalvedToFitAtLineEnd() throws {
        // Chromium 16 px, 115 px box: "は言った。（笑）" fits only with its "）" halved.
        let result = try measurer(size: 16).measure("は言った。（笑）『本当に？』", width: 115)
        #expect(result.lineTexts.first == "は言った。（笑）")
    }

    @Test(.enabled(if: fontInstalled(for: 0x4ED6)))
    func linesMayBreakBeforeAQuoteBetweenIdeographs() throws {
        // Chromium 18 px, 119 px box (Unicode 15.1 rule LB19a).
        let result = try measurer(size: 18).measure("いた。他说：“你好！”（笑）。“真的", width: 119)
        #expect(result.lineTexts == ["いた。他说：", "“你好！”", "（笑）。“真的"])
    }

    @Test func punctuationClassesSkipICUOnlyWhereICUAgrees() {
        // `characterClass(of:)` answers ASCII, kana, ideographs and Hangul without ICU: ICU must say the same.
        for codePoint in UInt32(0)..<0x1_0000 where !(0xD800...0xDFFF).contains(codePoint) {
            let explicit: Set<UInt32> = [
                0x2018, 0x201C, 0x2019, 0x201D, 0x3000, 0x00B7, 0x2027, 0x30FB, 0x3001, 0x3002,
                0xFF0C, 0xFF0E, 0xFF1A, 0xFF1B,
            ]
            guard !explicit.contains(codePoint) else { continue }
            #expect(
                HanKerning.characterClass(of: codePoint) == HanKerning.classFromICU(of: codePoint),
                "U+\(String(codePoint, radix: 16))")
        }
    }
}

@Suite("Blink's ASCII line-break pairs")
struct AsciiLineBreakingTests {
    func pair(_ previous: Character, _ next: Character, after beforePrevious: Character = "a") -> Bool? {
        AsciiLineBreaking.rules.breaksBetween(
            beforePrevious: UInt16(beforePrevious.asciiValue!), previous: UInt16(previous.asciiValue!),
            next: UInt16(next.asciiValue!))
    }

    @Test func urlsDoNotBreakAfterSlashesOrDots() {
        #expect(pair("/", "a") == false)
        #expect(pair(".", "c") == false)
        #expect(pair(":", "/") == false)
    }

    @Test func breaksAfterHyphenAndQuestionMark() {
        #expect(pair("-", "a") == true)
        #expect(pair("?", "q") == true)
        #expect(pair("?", "1") == true)
        #expect(pair("-", "]") == false)
    }

    @Test func hyphenBeforeDigitDependsOnWhatPrecedesIt() {
        #expect(pair("-", "4", after: "D") == true)  // ABCD-1234
        #expect(pair("-", "4", after: "2") == true)  // 1234-5678
        #expect(pair("-", "4", after: " ") == false)  // a minus sign
    }

    @Test func breaksBeforeOpeningBracketsAfterPunctuation() {
        #expect(pair(",", "(") == true)
        #expect(pair("a", "(") == false)
        #expect(pair(")", "[") == true)
    }

    @Test func longUrlWrapsOnlyWhereChromiumWould() throws {
        // No opportunity inside "example.com/photos": break-word splits it at graphemes.
        let result = try measurer().measure("see https://example.com/photos?id=1-2", width: 120)
        #expect(result.lineTexts.first == "see")
        #expect(result.lineTexts.joined() == "seehttps://example.com/photos?id=1-2")
    }
}

@Suite("Bounded cache")
struct BoundedCacheTests {
    @Test func neverHoldsMoreThanTwiceItsLimit() {
        var cache = BoundedCache<Int, Int>(limit: 10)
        for key in 0..<1000 { cache[key] = key }
        #expect(cache.count <= 20)
        #expect(cache[999] == 999)
        #expect(cache[0] == nil)
    }

    @Test func recentlyReadEntriesSurvive() {
        var cache = BoundedCache<Int, Int>(limit: 4)
        for key in 0..<4 { cache[key] = key }
        for key in 4..<7 {
            _ = cache[0]  // keep 0 warm
            cache[key] = key
        }
        #expect(cache[0] == 0)
    }
}

@Suite("The font list decides fallback, not the machine")
struct FontListTests {

    /// The primary font first, then the fallbacks in the style's order; a face named twice is listed once.
    @Test(.enabled(if: fontInstalled(for: 0x6F22)))
    func theMeasurerListsItsFontsInOrder() throws {
        let measurer = try TextMeasurer(style: TextStyle(font: DejaVuSans.path))
        #expect(measurer.fontFaces.map(\.family) == [
            "DejaVu Sans", "Noto Sans Devanagari", "Noto Sans Thai", "Noto Sans CJK JP", "Noto Color Emoji",
        ])
        #expect(measurer.fontFaces.allSatisfy { $0.digest.hasPrefix("sha256:") && $0.digest.count == 71 })
        let bold = try TextMeasurer(style: TextStyle(font: "DejaVu Sans", weight: 700))
        #expect(bold.fontFaces.map(\.style) == ["Bold", "Bold", "Bold", "Bold", "Regular"])
    }

    /// Only the listed fonts are asked: without fallbacks a Han character shows DejaVu's missing-glyph box (one
    /// line of DejaVu's height), with the CJK font it is set in it (taller line); the emoji font listed before the
    /// CJK font wins for a character both have.
    @Test(.enabled(if: fontInstalled(for: 0x6F22)))
    func onlyTheListedFontsAreAskedInTheirOrder() throws {
        let none = try TextMeasurer(style: TextStyle(font: DejaVuSans.path, fallbackFonts: []))
        let cjk = try TextMeasurer(style: TextStyle(font: DejaVuSans.path, fallbackFonts: ["Noto Sans CJK JP"]))
        #expect(none.measure("漢字", width: 300).height == 16)
        #expect(cjk.measure("漢字", width: 300).height == 20)
        #expect(none.fontFaces.count == 1)
        // U+26BD (soccer ball): both Noto Sans CJK and Noto Color Emoji have it; DejaVu Sans does not.
        let emojiFirst = try TextMeasurer(
            style: TextStyle(font: DejaVuSans.path, fallbackFonts: ["Noto Color Emoji", "Noto Sans CJK JP"]))
        let cjkFirst = try TextMeasurer(
            style: TextStyle(font: DejaVuSans.path, fallbackFonts: ["Noto Sans CJK JP", "Noto Color Emoji"]))
        #expect(emojiFirst.measure("\u{26BD}", width: 300).width != cjkFirst.measure("\u{26BD}", width: 300).width)
    }

    @Test func aMissingFallbackIsAnErrorNamingIt() {
        #expect {
            try TextMeasurer(style: TextStyle(font: DejaVuSans.path, fallbackFonts: ["No Such Family 42"]))
        } throws: { error in
            (error as? TextMeasureError)?.message.contains("fallback font 1: font family 'No Such Family 42'") == true
        }
    }
}
