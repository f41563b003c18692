import Testing

@testable import TextMeasure

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One layout Chromium measured: `Chromium/compare-chromium` writes these to
/// `Chromium/cases.tsv`, both next to this file.
struct ChromiumCase: Sendable, CustomStringConvertible {
    var id: Int
    var kind: String
    /// The font file Chromium loaded, as the fixture names it (a path on the machine that made it).
    var fontPath: String
    /// The CSS weight of the box: the primary face's weight, which picks the fallback faces too.
    var weight: Int { Self.faces[String(fontPath.split(separator: "/").last ?? "")]?.weight ?? 400 }
    var size: Double
    var width: Double
    var lineHeight: LineHeight
    var whiteSpace: WhiteSpace
    var chromiumLines: Int
    var chromiumHeight: Double
    var text: String

    var description: String {
        let file = fontPath.split(separator: "/").last ?? ""
        return "#\(id) \(kind) \(size)px w=\(Int(width)) lh=\(lineHeight) \(whiteSpace) \(file)"
    }

    /// Reads the fixture; each text is stored as hex UTF-8 so tabs and newlines survive.
    static func load() throws -> [ChromiumCase] {
        let directory = String(#filePath.dropLast(#filePath.split(separator: "/").last!.count))
        // Chromium/compare-chromium --fixture points here to try other cases.
        let path =
            getenv("TEXTMEASURE_CHROMIUM_FIXTURE").map { String(cString: $0) } ?? directory + "Chromium/cases.tsv"
        guard let file = fopen(path, "rb") else { throw FixtureError(message: "cannot open \(path)") }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count <= 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        var cases: [ChromiumCase] = []
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 10, let id = Int(fields[0]), let size = Double(fields[3]),
                let width = Double(fields[4]),
                let lineHeight = parseLineHeight(fields[5]), let lines = Double(fields[7]),
                let height = Double(fields[8])
            else { throw FixtureError(message: "malformed fixture line: \(line.prefix(80))") }
            cases.append(
                ChromiumCase(
                    id: id, kind: fields[1], fontPath: fields[2], size: size, width: width, lineHeight: lineHeight,
                    whiteSpace: fields[6] == "pre-line" ? .preLine : .normal,
                    chromiumLines: Int(lines.rounded()), chromiumHeight: height, text: decodeHex(fields[9])))
        }
        return cases
    }

    /// The faces `scripts/compare-chromium` loads with `@font-face`, by file name: the family and weight
    /// fontconfig finds them by here.
    static let faces: [String: (family: String, weight: Int)] = [
        "DejaVuSans.ttf": ("DejaVu Sans", 400), "DejaVuSans-Bold.ttf": ("DejaVu Sans", 700),
        "DejaVuSerif.ttf": ("DejaVu Serif", 400), "DejaVuSerif-Bold.ttf": ("DejaVu Serif", 700),
    ]

    /// This machine's file of the face Chromium measured with, found through fontconfig as the
    /// measurer finds a family, and checked to be the same file name.
    ///
    /// - Throws: ``FixtureError`` for a face the fixture should not name, or when fontconfig finds
    ///   another file for its family.
    func localFontFile() throws -> String {
        let name = String(fontPath.split(separator: "/").last ?? "")
        guard let face = Self.faces[name] else {
            throw FixtureError(
                message: "case #\(id) names \(fontPath); add its family and weight to ChromiumCase.faces")
        }
        let file = try TestFonts.file(family: face.family, weight: face.weight)
        guard file.split(separator: "/").last.map(String.init) == name else {
            throw FixtureError(
                message: "fontconfig finds \(file) for \(face.family) \(face.weight), not \(name) as Chromium measured")
        }
        return file
    }

    /// CSS `line-height` as the fixture spells it: `normal`, `20px` or `1.4`.
    private static func parseLineHeight(_ value: String) -> LineHeight? {
        if value == "normal" { return .normal }
        if value.hasSuffix("px") { return Double(value.dropLast(2)).map(LineHeight.pixels) }
        return Double(value).map(LineHeight.multiple)
    }

    private static func decodeHex(_ hex: String) -> String {
        var bytes: [UInt8] = []
        var high: UInt8?
        for character in hex.utf8 {
            let nibble = character <= 0x39 ? character - 0x30 : character - 0x57
            if let pending = high { bytes.append(pending << 4 | nibble); high = nil } else { high = nibble }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

struct FixtureError: Error { var message: String }

@Suite("Agreement with headless Chromium")
struct ChromiumAgreementTests {
    /// Every case's line count and height must equal Chromium's, as README claims ("2,400/2,400 exact
    /// lines and heights"); the figures are printed for README. Regenerate the fixture with
    /// `Chromium/compare-chromium` (next to this file); `TEXTMEASURE_CHROMIUM_REPORT=1` prints every mismatch.
    @Test func lineCountsMatchChromium() throws {
        let cases = try ChromiumCase.load()
        if getenv("TEXTMEASURE_CHROMIUM_FIXTURE") == nil {
            #expect(cases.count == 2400, "README quotes 2,400 cases")
        }
        try #require(!cases.isEmpty)
        var measurers: [String: TextMeasurer] = [:]
        var fontFiles: [String: String] = [:]
        var matchesByKind: [String: (lines: Int, heights: Int, total: Int)] = [:]
        var mismatches: [String] = []
        let verbose = getenv("TEXTMEASURE_CHROMIUM_REPORT") != nil
        for testCase in cases {
            let fontFile = try fontFiles[testCase.fontPath] ?? testCase.localFontFile()
            fontFiles[testCase.fontPath] = fontFile
            // The weight picks the fallback fonts' faces, as the bold boxes' weight does in Chromium.
            let style = TextStyle(
                font: fontFile, size: testCase.size, lineHeight: testCase.lineHeight, weight: testCase.weight,
                whiteSpace: testCase.whiteSpace)
            let key = "\(style)"
            let measurer = try measurers[key] ?? TextMeasurer(style: style)
            measurers[key] = measurer
            let result = measurer.measure(testCase.text, width: testCase.width)
            var tally = matchesByKind[testCase.kind] ?? (0, 0, 0)
            tally.total += 1
            if result.lines == testCase.chromiumLines { tally.lines += 1 }
            if result.height == testCase.chromiumHeight { tally.heights += 1 }
            matchesByKind[testCase.kind] = tally
            if result.lines != testCase.chromiumLines || result.height != testCase.chromiumHeight {
                let mismatch =
                    "\(testCase): chromium \(testCase.chromiumLines) lines \(testCase.chromiumHeight)px, "
                    + "ours \(result.lines) lines \(result.height)px \(result.lineTexts)"
                mismatches.append(mismatch)
                if verbose { print("MISMATCH " + mismatch) }
            }
        }
        let total = matchesByKind.values.reduce(0) { $0 + $1.total }
        let lineMatches = matchesByKind.values.reduce(0) { $0 + $1.lines }
        let heightMatches = matchesByKind.values.reduce(0) { $0 + $1.heights }
        for (kind, tally) in matchesByKind.sorted(by: { $0.key < $1.key }) {
            print("agreement \(kind): lines \(tally.lines)/\(tally.total), heights \(tally.heights)/\(tally.total)")
        }
        let percentage = Double(lineMatches * 1000 / total) / 10
        print("agreement overall: lines \(lineMatches)/\(total) (\(percentage)%), heights \(heightMatches)/\(total)")
        #expect(
            lineMatches == total && heightMatches == total,
            "lines \(lineMatches)/\(total), heights \(heightMatches)/\(total)")
        // The first few mismatches by name; the rest are counted above.
        for mismatch in mismatches.prefix(10) { Issue.record("mismatch \(mismatch)") }
    }
}
