import FeedLayoutTestSupport
import Foundation
import Testing

/// `feedlayout prepare` of a feed's items in ranges, then `feedlayout place` of all of them: the pages are
/// `feedlayout layout`'s, byte for byte; a gap, an overlap or other options are refused, naming them.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct PrepareAndPlaceEndToEndTests {
    /// Every file `layout` or `place` wrote into a folder, by relative path.
    static func files(in folder: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
        while let file = enumerator?.nextObject() as? URL {
            guard !file.hasDirectoryPath else { continue }
            files[String(file.path.dropFirst(folder.path.count))] = try Data(contentsOf: file)
        }
        return files
    }

    /// A feed of `count` pins with spans and sections, whose photos are the sample feed's (under the image root).
    static func feed(pins count: Int) throws -> URL {
        let photos = try FileManager.default.contentsOfDirectory(
            atPath: CommandRunner.repositoryRoot.appendingPathComponent("sample-feed/photos").path
        ).sorted()
        var random = SplitMix64(seed: 21)
        var feed = #"<?xml version="1.0"?><rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/" xmlns:fl="urn:feedlayout:1"><channel><title>t</title>"#
        for index in 0..<count {
            feed += "<item><guid>pin-\(index)</guid><link>https://example.com/\(index)</link><title>Pin \(index)</title>"
            feed += "<description>" + String(repeating: "caption words ", count: Int(random.next() % 12)) + "</description>"
            if index % 17 == 0 { feed += "<fl:span>2</fl:span>" }
            if index % 41 == 0 { feed += "<fl:span>full</fl:span>" }
            feed += "<fl:section>part \(index / 150)</fl:section>"
            feed += "<media:content url=\"photos/\(photos[index % photos.count])\" medium=\"image\"/></item>\n"
        }
        feed += "</channel></rss>\n"
        let file = try CommandRunner.temporaryDirectory().appendingPathComponent("feed.xml")
        try feed.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    @Test(arguments: [
        (feed: "sample", options: ["--breakpoints", "375:2,768:3,1280:5", "--placeholders", "--page-size", "9"],
         ranges: ["0..17", "17..40", "40.."]),
        (feed: "generated", options: ["--section-header-height", "30", "--section-inset", "8", "--page-size", "25"], ranges: ["0..333", "333..334", "334.."]),
    ])
    func rangesPreparedApartPlaceIntoTheLayoutsPages(feed: String, options: [String], ranges: [String]) async throws {
        let feedPath =
            feed == "sample" ? CommandRunner.sampleFeed : try Self.feed(pins: 1_000).path
        let common =
            options + ["--no-cache"]
            + (feed == "sample" ? [] : ["--image-root", CommandRunner.repositoryRoot.appendingPathComponent("sample-feed").path])
        let folder = try CommandRunner.temporaryDirectory()
        let layout = try await CommandRunner.run(["layout", feedPath, "--out", folder.appendingPathComponent("layout").path, "--quiet"] + common)
        #expect(layout.status <= 1, "\(layout.stderr)")
        var parts: [String] = []
        var statuses: [Int32] = []
        for (number, range) in ranges.enumerated() {
            let prepared = try await CommandRunner.run(["prepare", feedPath, "--items", range] + common)
            // 1 for a range with a photo that could not be read, as layout's 1 for the feed.
            #expect(prepared.status <= 1, "prepare \(range): \(prepared.stderr)")
            statuses.append(prepared.status)
            let part = folder.appendingPathComponent("part-\(number).ndjson")
            try prepared.stdout.write(to: part)
            parts.append(part.path)
        }
        #expect(statuses.max() == layout.status)
        let placed = try await CommandRunner.run(
            ["place"] + parts + ["--out", folder.appendingPathComponent("placed").path, "--quiet"] + common)
        #expect(placed.status == layout.status, "\(placed.stderr)")
        let expected = try Self.files(in: folder.appendingPathComponent("layout"))
        #expect(expected.count >= 4)
        #expect(try Self.files(in: folder.appendingPathComponent("placed")) == expected, "the pages differ")

        // The same items on standard input, as NDJSON pages on standard output.
        let joined = try parts.reduce(Data()) { $0 + (try Data(contentsOf: URL(fileURLWithPath: $1))) }
        let ndjsonLayout = try await CommandRunner.run(["layout", feedPath, "--quiet"] + common)
        let ndjsonPlace = try await CommandRunner.run(["place", "-", "--quiet"] + common, stdin: joined)
        #expect(ndjsonPlace.stdout == ndjsonLayout.stdout)
    }

    @Test func gapsOverlapsAndOtherOptionsAreRefusedByName() async throws {
        let folder = try CommandRunner.temporaryDirectory()
        var parts: [String] = []
        for range in ["0..10", "10..20", "20.."] {
            let part = folder.appendingPathComponent("part-\(parts.count).ndjson")
            try await CommandRunner.run(["prepare", CommandRunner.sampleFeed, "--items", range, "--no-cache"]).stdout.write(to: part)
            parts.append(part.path)
        }
        let gap = try await CommandRunner.run(["place", parts[0], parts[2]])
        #expect(gap.status == 1)
        #expect(gap.stderr.contains("item 20 follows item 9: items 10–19 are missing"), "\(gap.stderr)")
        let overlap = try await CommandRunner.run(["place", parts[0], parts[1], parts[1]])
        #expect(overlap.status == 1)
        #expect(overlap.stderr.contains("item 10 comes again after item 19"), "\(overlap.stderr)")
        let first = try await CommandRunner.run(["place", parts[1]])
        #expect(first.stderr.contains("item 10 comes first: items 0–9 are missing"), "\(first.stderr)")
        let other = try await CommandRunner.run(["place"] + parts + ["--width", "800"])
        #expect(other.status == 2)
        #expect(other.stderr.contains("part-0.ndjson:1: prepared with other layout options or fonts"), "\(other.stderr)")
        let breakpoints = try await CommandRunner.run(["place"] + parts + ["--breakpoints", "375:2,1024:4"])
        #expect(breakpoints.status == 2)
        // A damaged line is named by file and line.
        var damaged = try String(contentsOfFile: parts[1], encoding: .utf8)
        damaged = damaged.replacingOccurrences(of: #""sizeFrom":"header""#, with: #""sizeFrom":"guessed""#)
        try damaged.write(toFile: parts[1], atomically: true, encoding: .utf8)
        let broken = try await CommandRunner.run(["place"] + parts)
        #expect(broken.status == 1)
        #expect(broken.stderr.contains("part-1.ndjson:1: photo.sizeFrom is not header, declared or fallback"), "\(broken.stderr)")
        let counted = try await CommandRunner.run(["prepare", CommandRunner.sampleFeed, "--count"])
        #expect(counted.status == 0 && counted.stdoutText == "{\"items\":52}\n", "\(counted.stdoutText) \(counted.stderr)")
        let bad = try await CommandRunner.run(["prepare", CommandRunner.sampleFeed, "--items", "5..2"])
        #expect(bad.status == 2 && bad.stderr.contains("--items is START..END"))
    }
}
