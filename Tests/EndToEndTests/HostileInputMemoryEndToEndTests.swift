import FeedLayoutTestSupport
import Foundation
import Testing

/// Bytes that are not a clean feed cost no more memory than a clean feed: runs of broken bytes inside a
/// feed, random bytes after a root, and a large JSON Feed stay within 64 MB of peak memory, and input that
/// is no feed at all is refused, saying what it is, before more than its first 64 KiB are read.
@Suite(.serialized, .timeLimit(.minutes(5))) struct HostileInputMemoryEndToEndTests {
    /// The goal for any XML input (and for a JSON Feed, plus its largest item, which is small here).
    static let peakLimitKiB = 64 * 1024

    /// Runs `feedlayout ARGUMENTS` under `/usr/bin/time` and returns its output and peak resident memory.
    static func runMeasured(_ arguments: [String]) async throws -> (output: CommandRunner.Output, peakKiB: Int) {
        var output = try await CommandRunner.runTool(
            "/usr/bin/time", ["-f", "peak-kib=%M"] + [CommandRunner.binary.path] + arguments)
        let lines = output.stderr.split(separator: "\n", omittingEmptySubsequences: false)
        let marker = try #require(lines.last(where: { $0.hasPrefix("peak-kib=") }))
        output.stderr = lines.filter { !$0.hasPrefix("peak-kib=") }.joined(separator: "\n")
        // `time` passes the command's exit status on (and reports a signal as 128 + its number).
        return (output, try #require(Int(marker.dropFirst("peak-kib=".count))))
    }

    /// Writes a feed file made of `head`, `count` bytes from `filler` (called with each 64 KiB block's index)
    /// and `tail`, without holding it whole.
    static func writeFeed(
        named name: String, head: String, count: Int, tail: String, filler: (Int) -> [UInt8]
    ) throws -> String {
        let path = try CommandRunner.temporaryDirectory().appendingPathComponent(name).path
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try #require(FileHandle(forWritingAtPath: path))
        defer { try? handle.close() }
        handle.write(Data(head.utf8))
        var written = 0
        var block = 0
        while written < count {
            let bytes = filler(block).prefix(count - written)
            handle.write(Data(bytes))
            written += bytes.count
            block += 1
        }
        handle.write(Data(tail.utf8))
        return path
    }

    static let itemHead = """
        <?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>t</title>
        <item><guid>first</guid><title>First</title><description>
        """
    static let itemTail = "</description></item>\n<item><guid>second</guid><title>Second</title></item></channel></rss>\n"

    static func items(_ output: CommandRunner.Output) -> [[String: Any]] {
        output.stdoutText.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// 16 MB of a control character inside one caption: each dropped byte was once kept as a 40-byte record
    /// until the parser reached the next tag (8.2 GB for 200 MB). Both items come out, the first with one
    /// warning that counts every byte.
    @Test func aRunOfControlCharactersInsideAnItem() async throws {
        let count = 16 << 20
        let path = try Self.writeFeed(named: "controls.xml", head: Self.itemHead, count: count, tail: Self.itemTail) {
            _ in [UInt8](repeating: 0x01, count: 1 << 16)
        }
        let (output, peak) = try await Self.runMeasured(["ingest", path, "--quiet"])
        #expect(output.status == 0, "\(output.stderr)")
        let items = Self.items(output)
        #expect(items.map { $0["id"] as? String } == ["first", "second"])
        let warnings = (items.first?["warnings"] as? [[String: Any]]) ?? []
        #expect(warnings.contains { ($0["message"] as? String) == "\(count) control characters XML forbids were dropped" })
        #expect(peak < Self.peakLimitKiB, "peak \(peak) KiB")
    }

    /// 8 MB of "& " (a bare ampersand every other byte, so no two repairs touch).
    @Test func bareAmpersandsInsideAnItem() async throws {
        let pattern = [UInt8]("& ".utf8)
        let path = try Self.writeFeed(named: "ampersands.xml", head: Self.itemHead, count: 8 << 20, tail: Self.itemTail) {
            _ in Array(repeatElement(pattern, count: 1 << 15).joined())
        }
        let (output, peak) = try await Self.runMeasured(["ingest", path, "--quiet"])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(Self.items(output).map { $0["id"] as? String } == ["first", "second"])
        #expect(peak < Self.peakLimitKiB, "peak \(peak) KiB")
    }

    /// A root, then 8 MB of random bytes: whatever libxml2 recovers, memory stays flat and the run ends
    /// with a result or a clear error, never a crash.
    @Test func randomBytesAfterARoot() async throws {
        var random = SplitMix64(seed: 18)
        let path = try Self.writeFeed(named: "random.xml", head: "<rss><channel>", count: 8 << 20, tail: "") { _ in
            (0..<(1 << 16)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        }
        let (output, peak) = try await Self.runMeasured(["ingest", path, "--quiet"])
        #expect(output.status == 0 || output.status == 1, "status \(output.status): \(output.stderr)")
        #expect(peak < Self.peakLimitKiB, "peak \(peak) KiB")
    }

    /// A JSON Feed of 40,000 items (about 40 MB) is read entry by entry: held whole it cost about 13 times
    /// its size.
    @Test func aLargeJSONFeedStreams() async throws {
        let filler = String(repeating: "words in a caption ", count: 48)
        let entries = (0..<40_000).lazy.map { index in
            """
            {"id":"item-\(index)","url":"https://example.com/\(index)","title":"Item \(index)",\
            "content_text":"\(filler)","image":"https://example.com/\(index).jpg"}
            """
        }
        let path = try CommandRunner.temporaryDirectory().appendingPathComponent("feed.json").path
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.write(Data(#"{"version":"https://jsonfeed.org/version/1.1","title":"Big","items":["#.utf8))
        for (index, entry) in entries.enumerated() { handle.write(Data(((index > 0 ? "," : "") + entry).utf8)) }
        handle.write(Data("]}".utf8))
        try handle.close()
        let (output, peak) = try await Self.runMeasured(["ingest", path, "--quiet"])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdoutText.split(separator: "\n").count == 40_000)
        #expect(peak < Self.peakLimitKiB, "peak \(peak) KiB")
    }

    /// Input that is no feed is refused from its first bytes, saying what it is; `/dev/zero` never ends, so
    /// only an early refusal lets this test finish.
    @Test(arguments: [
        ("zeros", "binary data"), ("random", "no XML or JSON"), ("elf", "an ELF program"),
        ("gzip", "gzip-compressed"), ("png", "a PNG image"), ("/dev/zero", "binary data"),
    ])
    func nonFeedInputIsRefusedEarly(kind: String, expected: String) async throws {
        let path: String
        switch kind {
        case "zeros":
            path = try Self.writeFeed(named: "zeros", head: "", count: 40 << 20, tail: "") { _ in
                [UInt8](repeating: 0, count: 1 << 16)
            }
        case "random":
            // Printable noise with no '<' or '{' (random binary usually holds both bytes early).
            var random = SplitMix64(seed: 7)
            path = try Self.writeFeed(named: "noise", head: "", count: 8 << 20, tail: "") { _ in
                (0..<(1 << 16)).map { _ in UInt8(0x41 + random.next() % 26) }
            }
        case "elf": path = "/bin/ls"
        case "gzip":
            let folder = try CommandRunner.temporaryDirectory()
            let copy = folder.appendingPathComponent("feed.xml")
            try FileManager.default.copyItem(atPath: CommandRunner.sampleFeed, toPath: copy.path)
            _ = try await CommandRunner.runTool("/bin/gzip", ["-k", copy.path])
            path = copy.path + ".gz"
        case "png": path = CommandRunner.repositoryRoot.appendingPathComponent("sample-feed/photos/pompeii-coins.png").path
        default: path = kind
        }
        let (output, peak) = try await Self.runMeasured(["ingest", path, "--quiet"])
        #expect(output.status != 0)
        #expect(output.stderr.contains("notAFeed") && output.stderr.contains(expected), "\(output.stderr)")
        #expect(output.stdout.isEmpty)
        #expect(peak < Self.peakLimitKiB, "peak \(peak) KiB")
    }
}
