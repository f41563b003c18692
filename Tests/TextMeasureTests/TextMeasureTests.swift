import Testing

@testable import TextMeasure

/// Font files the tests measure with, found through fontconfig as `TextMeasurer` finds a family
/// (`TextStyle.resolvedFontFile()`), so no test depends on where a system keeps its fonts.
enum TestFonts {
    /// The file of an installed family's face.
    ///
    /// - Parameters:
    ///   - family: A family name, e.g. "DejaVu Sans".
    ///   - weight: The CSS weight of the face.
    /// - Returns: The face's file path.
    /// - Throws: ``TextMeasureError`` when the family is not installed.
    static func file(family: String, weight: Int = 400) throws -> String {
        try TextStyle(font: family, fallbackFonts: [], weight: weight).resolvedFonts()[0].path
    }
}

/// Facts about the DejaVu Sans file Debian ships (fonts-dejavu-core), read from its `head`
/// and `hmtx` tables with `ttx`; they are what HarfBuzz must reproduce, not its output.
enum DejaVuSans {
    static let path: String = {
        do {
            return try TestFonts.file(family: "DejaVu Sans")
        } catch {
            preconditionFailure("\(error); the tests need fonts-dejavu-core")
        }
    }()
    static let unitsPerEm = 2048.0
    static let advanceOfI = 569.0
    static let advanceOfSpace = 651.0
    static let advanceOfM = 1995.0

    static func pixels(_ units: Double, size: Double) -> Double { units * size / unitsPerEm }
}

/// Blink snaps a measured width up to the next 1/64 px (`LayoutUnit::FromFloatCeil`).
func snapped(_ pixels: Double) -> Double { (pixels * 64).rounded(.up) / 64 }

func measurer(size: Double = 14, lineHeight: LineHeight = .normal) throws -> TextMeasurer {
    try TextMeasurer(style: TextStyle(font: DejaVuSans.path, size: size, lineHeight: lineHeight))
}

@Suite("Widths come from the font's advances")
struct WidthTests {
    @Test(arguments: [12.0, 14.0, 15.5, 18.0])
    func repeatedGlyphIsCountTimesAdvance(size: Double) throws {
        let result = try measurer(size: size).measure(String(repeating: "i", count: 10), width: 1000)
        #expect(result.lines == 1)
        #expect(result.width == snapped(10 * DejaVuSans.pixels(DejaVuSans.advanceOfI, size: size)))
    }

    @Test func matchesChromiumForTenDotlessRunsOfI() throws {
        // Chromium 14 px DejaVu Sans: getBoundingClientRect().width of "iiiiiiiiii" and "mmmmmmmmmm".
        let measure = try measurer()
        #expect(measure.measure("iiiiiiiiii", width: 1000).width == 38.90625)
        #expect(measure.measure("mmmmmmmmmm", width: 1000).width == 136.390625)
    }

    @Test func familyNameAndPathGiveTheSameFont() throws {
        let byPath = try measurer().measure("Hamburgefonstiv", width: 1000)
        let byFamily = try TextMeasurer(style: TextStyle(font: "DejaVu Sans", size: 14)).measure(
            "Hamburgefonstiv", width: 1000)
        #expect(byPath == byFamily)
    }

    @Test func boldIsWiderThanRegular() throws {
        let regular = try TextMeasurer(style: TextStyle(font: "DejaVu Sans", weight: 400)).measure(
            "Hamburgefonstiv", width: 1000)
        let bold = try TextMeasurer(style: TextStyle(font: "DejaVu Sans", weight: 700)).measure(
            "Hamburgefonstiv", width: 1000)
        #expect(bold.width > regular.width)
    }
}

@Suite("Lines wrap as in Chromium")
struct WrappingTests {
    /// "iiii" is 15.56 px and a space 4.45 px at 14 px, so two words take 35.57 px.
    let word = "iiii"

    @Test func twoWordsFitIn36ButNotIn35() throws {
        let measure = try measurer()
        let text = [word, word, word].joined(separator: " ")
        #expect(measure.measure(text, width: 36).lines == 2)
        #expect(measure.measure(text, width: 36).lineTexts == ["iiii iiii", "iiii"])
        #expect(measure.measure(text, width: 35).lines == 3)
    }

    @Test func fitTestAllowsOneLayoutUnitOfSlack() throws {
        // Measured in Chromium: "iiii iiii" takes 2 lines in boxes 15.55 and 15.546875 px
        // wide and 4 in boxes 15.53125 and 15.53 px wide; a word is 15.5586 px, 996/64
        // rounded up, and Blink lets a line overrun by one LayoutUnit.
        let measure = try measurer()
        #expect(measure.measure("\(word) \(word)", width: 15.55).lines == 2)
        #expect(measure.measure("\(word) \(word)", width: 15.546875).lines == 2)
        #expect(measure.measure("\(word) \(word)", width: 15.53125).lines == 4)
        #expect(measure.measure("\(word) \(word)", width: 15.53).lines == 4)
    }

    @Test func breakWordUsesTheSameSlack() throws {
        // Chromium 16 px, 92 px box: "նավակներ" (exactly 92.015625 px) stays on one line.
        let result = try measurer(size: 16).measure("և նավակները դանդաղ", width: 92)
        #expect(result.lineTexts == ["և", "նավակներ", "ը դանդաղ"])
    }

    @Test func trailingSpacesHang() throws {
        let measure = try measurer()
        let wordWidth = snapped(4 * DejaVuSans.pixels(DejaVuSans.advanceOfI, size: 14))
        let result = measure.measure("\(word)    \(word)   ", width: 995.0 / 64)
        #expect(result.lines == 2)
        #expect(result.lineTexts == [word, word])
        #expect(result.width == wordWidth)
    }

    @Test func whitespaceCollapses() throws {
        let measure = try measurer()
        #expect(
            measure.measure("  \(word) \n\t  \(word)\r\n ", width: 300)
                == measure.measure("\(word) \(word)", width: 300))
        #expect(
            measure.measure("\(word) \(word)", width: 300).width
                == snapped(DejaVuSans.pixels(8 * DejaVuSans.advanceOfI + DejaVuSans.advanceOfSpace, size: 14)))
    }

    @Test func noBreakSpaceKeepsWordsTogether() throws {
        let measure = try measurer()
        let result = measure.measure("\(word) \(word)\u{A0}\(word)", width: 36)
        #expect(result.lineTexts == [word, "\(word)\u{A0}\(word)"])
        let plain = measure.measure("\(word) \(word) \(word)", width: 36)
        #expect(plain.lineTexts == ["\(word) \(word)", word])
    }

    @Test func softHyphenBreaksAndShowsAHyphen() throws {
        let measure = try measurer()
        let narrow = measure.measure("\(word)\u{AD}\(word)", width: 25)
        #expect(narrow.lineTexts == ["\(word)\u{2010}", word])
        let wide = measure.measure("\(word)\u{AD}\(word)", width: 100)
        #expect(wide.lineTexts == [word + word])
        // An unused soft hyphen takes no width.
        #expect(wide.width == measure.measure(word + word, width: 100).width)
    }

    @Test func lineSeparatorIsAnOrdinaryCharacterToChromium() throws {
        // Chromium, white-space: normal: "abc\u{2028}def" is one line (U+2028 even has a
        // width), and in a 40 px box it breaks after U+2028 like after any break opportunity.
        let measure = try measurer()
        #expect(measure.measure("abc\u{2028}def", width: 300).lines == 1)
        #expect(measure.measure("abc\u{2028}def ghi", width: 40).lineTexts == ["abc\u{2028}", "def", "ghi"])
    }

    /// Line counts Chromium gives these texts under `white-space: pre-line`.
    @Test(arguments: [
        ("a\n\nb", 3), ("a\n", 1), ("a\n\n", 2), ("\na", 2), ("a  \n  b", 2), ("a\r\nb", 2), ("a\rb", 2),
        ("x\u{2028}y", 1),
    ])
    func preLineKeepsNewlinesAsForcedBreaks(text: String, lines: Int) throws {
        let measure = try TextMeasurer(style: TextStyle(font: DejaVuSans.path, whiteSpace: .preLine))
        #expect(measure.measure(text, width: 300).lines == lines)
    }

    @Test func preLineDropsSpacesAroundNewlines() throws {
        let measure = try TextMeasurer(style: TextStyle(font: DejaVuSans.path, whiteSpace: .preLine))
        #expect(measure.measure("  one  two \n  three ", width: 300).lineTexts == ["one two", "three"])
        #expect(measure.measure("a\n\nb", width: 300).lineTexts == ["a", "", "b"])
    }

    @Test func newlinesDoNotBreakUnderWhiteSpaceNormal() throws {
        #expect(try measurer().measure("a\nb\n\nc", width: 300).lines == 1)
    }

    @Test func overlongWordBreaksAtGraphemes() throws {
        // Ten "i" (38.9 px) fit in 40 px, eleven (42.8 px) do not.
        let result = try measurer().measure(String(repeating: "i", count: 100), width: 40)
        #expect(result.lines == 10)
        #expect(result.lineTexts.allSatisfy { $0 == String(repeating: "i", count: 10) })
    }

    @Test func hugeWordsWrapInWorkProportionalToALine() throws {
        // 10,000 characters with no break opportunity: 1,000 lines of ten "i".
        let result = try measurer().measure(String(repeating: "i", count: 10_000), width: 40)
        #expect(result.lines == 1000)
        #expect(result.lineTexts.allSatisfy { $0 == String(repeating: "i", count: 10) })
        // Surrogate pairs never split at the edge of the search window.
        let faces = try measurer().measure(String(repeating: "😀", count: 300), width: 100)
        #expect(faces.lineTexts.joined() == String(repeating: "😀", count: 300))
        #expect(faces.lineTexts.allSatisfy { !$0.unicodeScalars.contains("\u{FFFD}") })
    }

    @Test func overlongWordMovesToItsOwnLineFirst() throws {
        let result = try measurer().measure("ab " + String(repeating: "i", count: 15), width: 40)
        #expect(result.lineTexts == ["ab", String(repeating: "i", count: 10), String(repeating: "i", count: 5)])
    }

    @Test func graphemeClustersStayWhole() throws {
        // "e" + combining acute: a narrow box must not separate the accent from its base.
        let result = try measurer().measure(String(repeating: "e\u{301}", count: 6), width: 1)
        #expect(result.lines == 6, "\(result.lineTexts.map { Array($0.unicodeScalars) })")
        #expect(result.lineTexts.allSatisfy { $0 == "e\u{301}" })
    }

    @Test func emptyTextHasNoLines() throws {
        let measure = try measurer()
        for text in ["", "   ", "\n\t", "\u{1}\u{2}"] {
            #expect(
                measure.measure(text, width: 100)
                    == TextMeasurement(lines: 0, height: 0, width: 0, truncated: false, lineTexts: []))
        }
    }
}

@Suite("Line heights follow Blink's rounding")
struct LineHeightTests {
    /// Chromium: a one-line div of DejaVu Sans is 15, 16 and 20 px tall at 13, 14 and 17 px.
    @Test(arguments: [(13.0, 15.0), (14.0, 16.0), (17.0, 20.0)])
    func normalLineHeightMatchesChromium(size: Double, expected: Double) throws {
        let measure = try measurer(size: size)
        #expect(measure.lineHeightInPixels == expected)
        #expect(measure.measure("x", width: 100).height == expected)
        let preLine = try TextMeasurer(style: TextStyle(font: DejaVuSans.path, size: size, whiteSpace: .preLine))
        #expect(preLine.measure("x\ny", width: 100).height == 2 * expected)
    }

    @Test func pixelLineHeight() throws {
        let measure = try measurer(lineHeight: .pixels(20.3))
        #expect(measure.lineHeightInPixels == 20.296875)  // rounded to a LayoutUnit
        #expect(measure.measure("iiii iiii iiii", width: 35).height == 3 * 20.296875)
    }

    @Test func multipleLineHeight() throws {
        let measure = try measurer(size: 14, lineHeight: .multiple(1.5))
        #expect(measure.lineHeightInPixels == 21)
        #expect(measure.measure("iiii iiii iiii", width: 35).height == 63)
    }

    @Test func invalidLineHeightIsRejected() {
        #expect(throws: TextMeasureError.self) { try measurer(lineHeight: .pixels(-1)) }
        #expect(throws: TextMeasureError.self) { try measurer(size: .nan) }
    }
}

@Suite("Truncation")
struct TruncationTests {
    @Test func maxLinesCutsAndAddsAnEllipsis() throws {
        let measure = try measurer()
        let text = "iiii iiii iiii iiii iiii iiii"
        let full = measure.measure(text, width: 36)
        #expect(full.lines == 3)
        #expect(!full.truncated)
        let cut = measure.measure(text, width: 36, maxLines: 2)
        #expect(cut.lines == 2)
        #expect(cut.truncated)
        #expect(cut.height == 2 * measure.lineHeightInPixels)
        #expect(cut.lineTexts.first == "iiii iiii")
        #expect(cut.lineTexts.last?.hasSuffix("\u{2026}") == true)
        #expect(cut.width <= 36)
    }

    @Test func ellipsisFitsWhenTheLineIsShortEnough() throws {
        let cut = try measurer().measure("iiii iiii iiii", width: 36, maxLines: 1)
        // "iiii iiii" + "…" is 35.6 + 14 px: too wide, so graphemes are removed until it fits.
        #expect(cut.lineTexts.count == 1)
        #expect(cut.lineTexts[0].hasSuffix("\u{2026}"))
        #expect(cut.width <= 36)
        #expect(cut.lineTexts[0].count < "iiii iiii\u{2026}".count)
    }

    @Test func truncationKeepsAtLeastOneCharacter() throws {
        // Too narrow for even "m…": Blink still shows the first character.
        let cut = try measurer().measure("mmmm mmmm", width: 12, maxLines: 1)
        #expect(cut.truncated)
        #expect(cut.lineTexts == ["m\u{2026}"])
    }

    @Test func noTruncationWhenItFits() throws {
        let result = try measurer().measure("iiii iiii", width: 36, maxLines: 1)
        #expect(!result.truncated)
        #expect(result.lineTexts == ["iiii iiii"])
    }
}

@Suite("Bad input and errors")
struct BadInputTests {
    @Test func invalidUTF8IsReplaced() throws {
        let measure = try measurer()
        let bytes: [UInt8] = [0x61, 0xFF, 0x62, 0xC3]
        let result = measure.measure(utf8: bytes, width: 300)
        #expect(result.lineTexts == ["a\u{FFFD}b\u{FFFD}"])
        #expect(result.width == measure.measure("a\u{FFFD}b\u{FFFD}", width: 300).width)
    }

    @Test func controlCharactersAreDropped() throws {
        let measure = try measurer()
        #expect(measure.measure("a\u{1}b\u{7F}c\u{9B}", width: 300) == measure.measure("abc", width: 300))
    }

    @Test func missingFontFileNamesTheFile() {
        do {
            _ = try TextMeasurer(style: TextStyle(font: "/nonexistent/Missing.ttf"))
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .fontFileUnreadable)
            #expect(error.message.contains("/nonexistent/Missing.ttf"))
        }
    }

    @Test func missingFamilyNamesTheFamily() {
        do {
            _ = try TextMeasurer(style: TextStyle(font: "No Such Family Sans"))
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .fontFamilyNotFound)
            #expect(error.message.contains("No Such Family Sans"))
            #expect(error.description.contains("install"))
        }
    }

    @Test func nonFontFileIsRejected() {
        #expect(throws: TextMeasureError.self) { try TextMeasurer(style: TextStyle(font: "/etc/hostname")) }
    }
}

@Suite("Concurrency")
struct ConcurrencyTests {
    @Test func concurrentMeasurementsAgreeWithSequentialOnes() async throws {
        let measure = try measurer()
        let texts = (0..<40).map { index in
            "Caption \(index): a quick brown fox, naïve café 漢字 \(String(repeating: "x", count: index))"
        }
        let expected = texts.map { measure.measure($0, width: 120, maxLines: 3) }
        let fresh = try measurer()
        let results = await withTaskGroup(of: (Int, TextMeasurement).self) { group in
            for round in 0..<4 {
                for (index, text) in texts.enumerated() {
                    group.addTask { (index, fresh.measure(text, width: 120, maxLines: 3 + round - round)) }
                }
            }
            var collected: [(Int, TextMeasurement)] = []
            for await result in group { collected.append(result) }
            return collected
        }
        #expect(results.count == 4 * texts.count)
        for (index, result) in results { #expect(result == expected[index]) }
    }
}
