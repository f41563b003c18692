import Testing
import TextMeasure

/// The drawing API TextMeasure offers the renderer: the measurement's own lines, shaped and ordered.
@Suite struct GlyphLinesTests {
    static let measurer = try! TextMeasurer(style: TextStyle(font: "DejaVu Sans", size: 13))

    /// The glyph indices a text shapes to on its own.
    static func glyphs(_ text: String) -> Set<UInt32> {
        let line = measurer.glyphLines(measurer.measure(text, width: 1000))[0]
        return Set(line.runs.flatMap { $0.glyphs.map(\.glyph) })
    }

    /// The leftmost and rightmost x of the glyphs of `word` within a shaped line.
    static func extent(of word: String, in line: GlyphLine) -> ClosedRange<Double> {
        let ids = glyphs(word)
        let xs = line.runs.flatMap(\.glyphs).filter { ids.contains($0.glyph) }.map(\.x)
        return xs.min()!...xs.max()!
    }

    @Test func linesFollowTheMeasurementsBreaks() {
        let measurement = Self.measurer.measure(
            "A double espresso in a red cup on a worn wooden café table, and then some more words.", width: 120)
        let lines = Self.measurer.glyphLines(measurement)
        #expect(lines.map(\.text) == measurement.lineTexts)
        #expect(lines.count > 2)
        // Stacked without gaps, summing to the measured height.
        for (previous, next) in zip(lines, lines.dropFirst()) { #expect(next.top == previous.top + previous.height) }
        #expect(lines.last!.top + lines.last!.height == measurement.height)
        for line in lines { #expect(line.baseline > line.top && line.baseline < line.top + line.height) }
        // Widths stay inside the box (Blink's one-LayoutUnit slack aside).
        for line in lines { #expect(line.width <= 120 + 1.0 / 64) }
    }

    @Test func arabicReadsRightToLeftInsideALeftToRightLine() {
        // "salam" then "alaykum": the first word must sit to the right of the second.
        let line = Self.measurer.glyphLines(Self.measurer.measure("سلام عليكم", width: 1000))[0]
        #expect(Self.extent(of: "سلام", in: line).lowerBound > Self.extent(of: "عليكم", in: line).upperBound)
        // Latin after Arabic in a left-to-right paragraph goes to the right of it.
        let mixed = Self.measurer.glyphLines(Self.measurer.measure("عليكم xyz", width: 1000))[0]
        #expect(Self.extent(of: "xyz", in: mixed).lowerBound > Self.extent(of: "عليكم", in: mixed).upperBound)
    }

    @Test func fallbackFontsAppearAsTheirOwnRuns() {
        let line = Self.measurer.glyphLines(Self.measurer.measure("Tee 日本", width: 1000))[0]
        #expect(line.runs.count == 2)
        #expect(line.runs[0].fontPath.contains("DejaVu"))
        #expect(!line.runs[1].fontPath.contains("DejaVu"))
        #expect(line.runs[1].glyphs.first!.x > line.runs[0].glyphs.last!.x)
    }

    /// A line is drawn with the faces and advances it was measured with: its drawn width is its measured width, to
    /// the 64th of a pixel measurement keeps, in every script the standard font list covers.
    @Test(arguments: [
        "A double espresso in a red cup", "Kaffee, Brötchen und Äpfel", "東京の夜景「新宿」、渋谷。",
        "नमस्ते दुनिया", "สวัสดีชาวโลก", "Family 👨‍👩‍👧 and flags 🇯🇵🇩🇪", "Tee 日本 and ☕",
    ])
    func aDrawnLineIsAsWideAsItsMeasurement(text: String) {
        let measurement = Self.measurer.measure(text, width: 10_000)
        #expect(measurement.lineTexts.count == 1)
        let line = Self.measurer.glyphLines(measurement)[0]
        #expect(abs(line.width - measurement.width) <= 1.0 / 64, "drawn \(line.width), measured \(measurement.width)")
    }
}

