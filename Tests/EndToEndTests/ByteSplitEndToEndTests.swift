import FeedLayoutTestSupport
import Foundation
import Testing

/// A feed file split by bytes: `prepare --split N` cuts it, `prepare --bytes … --items … --first-line …` prepares
/// each share reading only the head and that share, and `place` of the shares gives `layout`'s pages byte for byte,
/// warnings' lines and columns included, whatever the markup holds between the cuts.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct ByteSplitEndToEndTests {
    struct Range: Decodable {
        var bytes: String
        var items: String
        var firstLine: Int
    }

    /// Feeds whose markup tempts a byte scan to cut in the wrong place, by name, and the fewest ranges each must give.
    static let feeds: [(name: String, minimumRanges: Int, text: String)] = [
        ("rss", 4, rss(lineEnd: "\r\n")),
        ("atom", 4, atom()),
        ("rdf", 4, rdf()),
        // Nowhere to cut: no item begins a line.
        ("one line", 1, rss(lineEnd: "")),
        // Cuts only before the mismatched end tag in item 70; the rest is one range the parser repairs.
        ("broken", 3, rss(lineEnd: "\n", brokenAt: 70)),
        // An entity whose text is an item: the scan cannot see it, so the file is one range the parser counts.
        ("entities", 1, entities()),
    ]

    /// RSS 2.0 with everything a cut must respect: a CDATA section and a comment holding lines that begin with
    /// `<item>`, an attribute value holding `>`, channel elements and comments between items; and warnings that
    /// name lines and columns (bare `&`, bytes that are not UTF-8, dates that are not dates, missing photos).
    static func rss(lineEnd: String, brokenAt broken: Int? = nil) -> String {
        var feed = #"<?xml version="1.0" encoding="utf-8"?>"# + lineEnd
        feed += #"<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/" xmlns:dc="http://purl.org/dc/elements/1.1/">"# + lineEnd
        feed += #"<channel xml:base="base/">"# + lineEnd + "<title>Split me</title>" + lineEnd
        for index in 0..<120 {
            feed += "  <item>" + lineEnd + "    <title>Pin \(index) — 東京 \(index % 7 == 0 ? "AT&T" : "")</title>" + lineEnd
            feed += "    <guid>pin-\(index)</guid>" + lineEnd
            if index % 5 == 0 {
                feed += "    <description><![CDATA[Markup in text:" + lineEnd + "  <item>not an item</item>" + lineEnd
                feed += "]]> and more</description>" + lineEnd
            } else {
                feed += "    <description>caption \(String(repeating: "words ", count: index % 13)) \u{FFFD}</description>" + lineEnd
            }
            if index % 9 == 0 { feed += "    <pubDate>not a date \(index)</pubDate>" + lineEnd }
            if index == broken { feed += "    <dc:creator>Broken</dc:subject>" + lineEnd }
            feed += "    <media:content url=\"photos/missing-\(index).jpg\" medium=\"image\" width=\"\(300 + index)\" height=\"200\" title=\"a > b\"/>" + lineEnd
            feed += "  </item>" + lineEnd
            if index % 11 == 0 { feed += "  <!--" + lineEnd + "  <item>commented out</item>" + lineEnd + "  -->" + lineEnd }
            if index == 60 { feed += "  <image><url>https://example.com/logo.png</url></image>" + lineEnd }
        }
        return feed + "</channel>" + lineEnd + "</rss>" + lineEnd
    }

    /// RSS whose DOCTYPE declares an entity holding a whole item, used between the items of the file.
    static func entities() -> String {
        var feed = #"<?xml version="1.0"?>"# + "\n"
        feed += #"<!DOCTYPE rss [ <!ENTITY extra "<item><guid>from-the-entity</guid><title>From an entity</title></item>"> ]>"#
        feed += "\n" + #"<rss version="2.0"><channel><title>Entities</title>"# + "\n"
        for index in 0..<80 {
            feed += "  <item>\n    <guid>pin-\(index)</guid>\n    <title>Pin \(index)</title>\n  </item>\n"
            if index == 30 { feed += "  &extra;\n" }
        }
        return feed + "</channel>\n</rss>\n"
    }

    /// Atom with a prefixed default: entries are `<a:entry>`, the namespace declared on the root.
    static func atom() -> String {
        var feed = #"<?xml version="1.0"?>"# + "\n" + #"<a:feed xmlns:a="http://www.w3.org/2005/Atom" xml:base="media/">"# + "\n"
        feed += "<a:title>Atom</a:title>\n"
        for index in 0..<80 {
            feed += "<a:entry>\n<a:id>urn:entry:\(index)</a:id>\n<a:title type=\"html\">Entry &amp; \(index)</a:title>\n"
            feed += "<a:updated>\(index % 6 == 0 ? "yesterday" : "2026-01-02T03:04:05Z")</a:updated>\n"
            feed += "<a:summary>summary \(String(repeating: "text ", count: index % 9))</a:summary>\n"
            feed += "<a:link rel=\"enclosure\" type=\"image/jpeg\" href=\"img/\(index).jpg\"/>\n</a:entry>\n"
        }
        return feed + "</a:feed>\n"
    }

    /// RSS 1.0: items follow the channel, as siblings of it under `rdf:RDF`.
    static func rdf() -> String {
        var feed = #"<?xml version="1.0" encoding="ISO-8859-1"?>"# + "\n"
        feed += #"<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/">"# + "\n"
        feed += "<channel rdf:about=\"https://example.net/\"><title>RDF</title><items><rdf:Seq/></items></channel>\n"
        for index in 0..<90 {
            feed += "<item rdf:about=\"https://example.net/\(index)\">\n<title>Caf\u{E9} \(index)</title>\n"
            feed += "<link>https://example.net/\(index)</link>\n<description>d\u{E9}j\u{E0} vu \(index)</description>\n</item>\n"
        }
        return feed + "</rdf:RDF>\n"
    }

    @Test(arguments: feeds.map(\.name))
    func sharesPreparedApartPlaceIntoTheLayoutsPages(name: String) async throws {
        let feed = try #require(Self.feeds.first { $0.name == name })
        let folder = try CommandRunner.temporaryDirectory()
        let path = folder.appendingPathComponent("feed.xml").path
        // The RDF feed is ISO-8859-1: é and à are one byte each, as declared.
        let encoding: String.Encoding = name == "rdf" ? .isoLatin1 : .utf8
        var data = try #require(feed.text.data(using: encoding))
        if name == "rss" {
            // A byte that is not UTF-8 in item 3's caption: a warning with a line and a column.
            let marker = try #require("caption words words words ".data(using: .utf8))
            let at = try #require(data.range(of: marker))
            data.replaceSubrange(at.upperBound..<at.upperBound, with: [0xE9])
        }
        try data.write(to: URL(fileURLWithPath: path))
        let options = ["--no-cache", "--page-size", "7", "--width", "600", "--columns", "3"]

        let layout = try await CommandRunner.run(["layout", path, "--out", folder.appendingPathComponent("layout").path, "--quiet"] + options)
        #expect(layout.status <= 1, "\(layout.stderr)")
        let split = try await CommandRunner.run(["prepare", path, "--split", "6"])
        #expect(split.status == 0, "\(split.stderr)")
        let ranges = try split.stdoutText.split(separator: "\n").map { try JSONDecoder().decode(Range.self, from: Data($0.utf8)) }
        #expect(ranges.count >= feed.minimumRanges && ranges.count <= 6, "\(split.stdoutText)")
        #expect(ranges.first?.bytes.hasPrefix("0..") == true)
        #expect(ranges.last?.bytes.hasSuffix("..\(data.count)") == true)

        var parts: [String] = []
        for range in ranges {
            let prepared = try await CommandRunner.run(
                ["prepare", path, "--bytes", range.bytes, "--items", range.items, "--first-line", "\(range.firstLine)"] + options)
            #expect(prepared.status <= 1, "prepare --bytes \(range.bytes): \(prepared.stderr)")
            let part = folder.appendingPathComponent("part-\(parts.count).ndjson")
            try prepared.stdout.write(to: part)
            parts.append(part.path)
        }
        let placed = try await CommandRunner.run(
            ["place"] + parts + ["--out", folder.appendingPathComponent("placed").path, "--quiet"] + options)
        #expect(placed.status == layout.status, "\(placed.stderr)")
        let expected = try PrepareAndPlaceEndToEndTests.files(in: folder.appendingPathComponent("layout"))
        #expect(expected.count >= 10)
        #expect(try PrepareAndPlaceEndToEndTests.files(in: folder.appendingPathComponent("placed")) == expected, "the pages differ")
        if name == "rss" {
            // The warnings that must keep their place are there to keep.
            let pages = expected.values.map { String(decoding: $0, as: UTF8.self) }.joined()
            for code in ["unescapedAmpersand", "invalidUTF8", "invalidDate"] {
                #expect(pages.contains("\"code\":\"\(code)\""), "no \(code) warning in the pages")
            }
            #expect(pages.contains("\"column\":"))
        }
    }

    @Test func sharesThatDoNotFitTheFileAreRefusedByName() async throws {
        let folder = try CommandRunner.temporaryDirectory()
        let path = folder.appendingPathComponent("feed.xml").path
        try Self.rss(lineEnd: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        let split = try await CommandRunner.run(["prepare", path, "--split", "3"])
        let ranges = try split.stdoutText.split(separator: "\n").map { try JSONDecoder().decode(Range.self, from: Data($0.utf8)) }
        let second = try #require(ranges.count >= 2 ? ranges[1] : nil)
        let start = try #require(Int(second.bytes.split(separator: ".").first ?? ""))

        // One byte later is not the start of a line.
        let shifted = try await CommandRunner.run(
            ["prepare", path, "--bytes", "\(start + 1)..", "--items", second.items, "--first-line", "\(second.firstLine)"])
        #expect(shifted.status == 2)
        #expect(shifted.stderr.contains("bytes \(start + 1)..: the range does not begin a line at byte \(start + 1)"), "\(shifted.stderr)")
        // Items that are not the range's.
        let miscounted = try await CommandRunner.run(
            ["prepare", path, "--bytes", second.bytes, "--items", "0..3", "--first-line", "\(second.firstLine)"])
        #expect(miscounted.status == 2)
        #expect(miscounted.stderr.contains("holds"), "\(miscounted.stderr)")
        #expect(miscounted.stderr.contains("not 3 (--items 0..3)"), "\(miscounted.stderr)")
        // The first line left out.
        let noLine = try await CommandRunner.run(["prepare", path, "--bytes", second.bytes, "--items", second.items])
        #expect(noLine.status == 2 && noLine.stderr.contains("--first-line 1 is not after the head's last line"), "\(noLine.stderr)")
        // --bytes without --items, on standard input, and --split of a JSON Feed.
        let alone = try await CommandRunner.run(["prepare", path, "--bytes", second.bytes])
        #expect(alone.status == 2 && alone.stderr.contains("--bytes needs the range's --items"), "\(alone.stderr)")
        let stdin = try await CommandRunner.run(["prepare", "-", "--split", "2"], stdin: Data())
        #expect(stdin.status == 2 && stdin.stderr.contains("is not a file path"), "\(stdin.stderr)")
        let json = folder.appendingPathComponent("feed.json").path
        try #"{"version": "https://jsonfeed.org/version/1.1", "title": "j", "items": []}"#.write(toFile: json, atomically: true, encoding: .utf8)
        let jsonSplit = try await CommandRunner.run(["prepare", json, "--split", "2"])
        #expect(jsonSplit.status != 0 && jsonSplit.stderr.contains("it is not XML (a JSON Feed?)"), "\(jsonSplit.stderr)")
    }
}
