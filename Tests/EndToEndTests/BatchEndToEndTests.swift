import Foundation
import Testing

/// `layout` over several feeds: arguments, folders, and `-` with a list (or a feed) on standard input; one
/// failing feed never stops the others. And the progress line: on a terminal only.
@Suite(.serialized) struct BatchEndToEndTests {
    /// A folder with two good feeds (the sample, and a small one beside its photos) and a broken one.
    static func feedFolder() throws -> URL {
        let folder = try CommandRunner.temporaryDirectory()
        let sample = CommandRunner.repositoryRoot.appendingPathComponent("sample-feed")
        try FileManager.default.copyItem(at: sample.appendingPathComponent("feed.xml"), to: folder.appendingPathComponent("a.xml"))
        try FileManager.default.copyItem(at: sample.appendingPathComponent("photos"), to: folder.appendingPathComponent("photos"))
        let photo = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("photos").path)
            .sorted().first { $0.hasSuffix(".jpg") }!
        try """
            <rss version="2.0"><channel><title>small</title>
            <item><guid>s1</guid><title>one</title><enclosure url="photos/\(photo)" type="image/jpeg"/></item>
            <item><guid>s2</guid><title>two</title><enclosure url="photos/\(photo)" type="image/jpeg"/></item>
            </channel></rss>
            """.write(to: folder.appendingPathComponent("b.rss"), atomically: true, encoding: .utf8)
        try "not a feed at all".write(to: folder.appendingPathComponent("c.xml"), atomically: true, encoding: .utf8)
        try "ignored".write(to: folder.appendingPathComponent("notes.txt"), atomically: true, encoding: .utf8)
        return folder
    }

    @Test func aFolderGivesEachFeedItsOwnOutputFolderAndABrokenOneFailsAlone() async throws {
        let feeds = try Self.feedFolder()
        let out = try CommandRunner.temporaryDirectory()
        let output = try await CommandRunner.run(["layout", feeds.path, "--out", out.path, "--page-size", "20"])
        #expect(output.status == 1, "one feed fails and the sample has broken images: \(output.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).sorted() == ["a", "b"])
        let a = try PageFile.readAll(in: out.appendingPathComponent("a"))
        #expect(a.flatMap(\.items).count == LayoutEndToEndTests.sampleItemCount)
        let b = try PageFile.readAll(in: out.appendingPathComponent("b"))
        #expect(b.flatMap(\.items).map { $0["id"] as! String } == ["s1", "s2"])
        #expect(b[0].json["feed"] as? String == feeds.appendingPathComponent("b.rss").path)
        #expect(output.stderr.contains("c.xml"), "the broken feed is named: \(output.stderr)")
        #expect(output.stderr.contains("3 feeds: \(LayoutEndToEndTests.sampleItemCount + 2) items"))
        #expect(output.stderr.contains("1 feed failed"))
    }

    @Test func aListOnStandardInputStreamsNDJSONWithAnErrorRecordForTheFeedThatFails() async throws {
        let feeds = try Self.feedFolder()
        let list = "\(feeds.path)/b.rss\n\n# a comment\n\(feeds.path)/missing.xml\n\(feeds.path)/b.rss"
        let output = try await CommandRunner.run(["layout", "-", "--quiet"], stdin: Data(list.utf8))
        #expect(output.status == 1)
        let records = try String(decoding: output.stdout, as: UTF8.self).split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
        #expect(records.map { $0["feed"] as? String } == ["\(feeds.path)/b.rss", "\(feeds.path)/missing.xml", "\(feeds.path)/b.rss"])
        #expect(records[0]["schema"] as? String == "feedlayout.page/1")
        let error = records[1]["error"] as? [String: Any]
        #expect(error?["code"] as? String == "feedUnreadable")
        #expect((error?["message"] as? String)?.contains("missing.xml") == true)
        // The pages are valid pages; the error record is not a page and is left out of the check.
        let pages = records.enumerated().filter { $0.offset != 1 }.map { try! JSONSerialization.data(withJSONObject: $0.element) }
        let validation = try await CommandRunner.runTool(
            CommandRunner.repositoryRoot.appendingPathComponent("scripts/validate-pages").path, ["-"],
            stdin: Data(pages.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n").utf8))
        #expect(validation.status == 0, "\(validation.stdoutText) \(validation.stderr)")
    }

    @Test func aFeedOnStandardInputIsStillAFeed() async throws {
        let feed = try Data(contentsOf: URL(fileURLWithPath: CommandRunner.sampleFeed))
        let output = try await CommandRunner.run(["layout", "-", "--quiet"], stdin: Data("\u{FEFF}\n  ".utf8) + feed)
        let pages = try String(decoding: output.stdout, as: UTF8.self).split(separator: "\n").map { try PageFile(Data($0.utf8)) }
        #expect(pages.flatMap(\.items).count == LayoutEndToEndTests.sampleItemCount)
        #expect(pages.allSatisfy { $0.json["feed"] == nil }, "one feed: pages as always")
    }

    @Test func resumingIsForOneFeedAndStandardInputStandsAlone() async throws {
        let feeds = try Self.feedFolder()
        let resume = try await CommandRunner.run(["layout", feeds.path, "--resume", "fl1.x"])
        #expect(resume.status == 2)
        #expect(resume.stderr.contains("--resume continues one feed's layout"))
        let mixed = try await CommandRunner.run(["layout", "-", CommandRunner.sampleFeed])
        #expect(mixed.status == 2)
        #expect(mixed.stderr.contains("stands alone"))
        let empty = try await CommandRunner.run(["layout", try CommandRunner.temporaryDirectory().path])
        #expect(empty.status == 1)
        #expect(empty.stderr.contains("holds no feeds"))
    }

    /// On a terminal (util-linux `script` gives the command one) a progress line is drawn and cleared; in a pipe,
    /// or with --quiet, nothing of the sort.
    @Test func progressIsDrawnOnATerminalOnly() async throws {
        let command = "\(CommandRunner.binary.path) layout \(CommandRunner.sampleFeed) --out \(try CommandRunner.temporaryDirectory().path) --probe-concurrency 1 --no-cache"
        let onTerminal = try await CommandRunner.runTool("/usr/bin/script", ["-qec", command, "/dev/null"])
        #expect(onTerminal.stdoutText.contains("images probed"))
        #expect(onTerminal.stdoutText.contains("\r\u{1B}[2K"), "the line is redrawn in place and cleared")
        #expect(onTerminal.stdoutText.contains("items/s"))
        let quiet = try await CommandRunner.runTool("/usr/bin/script", ["-qec", command + " --quiet", "/dev/null"])
        #expect(!quiet.stdoutText.contains("items/s"))
        #expect(!quiet.stdoutText.contains("\u{1B}["))
        let piped = try await CommandRunner.run(["layout", CommandRunner.sampleFeed, "--out", try CommandRunner.temporaryDirectory().path])
        #expect(!piped.stderr.contains("items/s"))
        #expect(!piped.stderr.contains("\u{1B}["))
        #expect(piped.stderr.contains("(parse "), "the summary has the time per stage: \(piped.stderr)")
    }
}
