import FeedLayoutTestSupport
import Foundation
import Testing

/// An `--out` folder holds exactly one whole run's pages at every moment: a run killed at any point leaves the
/// previous run's folder as it was, and two runs never write one folder at once.
@Suite(.serialized) struct OutputFolderEndToEndTests {
    /// A feed of `count` items next to two of the sample's photos.
    static func feedFolder(items count: Int) throws -> URL {
        let folder = try CommandRunner.temporaryDirectory()
        let photos = CommandRunner.repositoryRoot.appendingPathComponent("sample-feed/photos")
        for name in ["chelsea-the-cat.jpg", "aitzgorri-autumn.jpg"] {
            try FileManager.default.copyItem(
                at: photos.appendingPathComponent(name), to: folder.appendingPathComponent(name))
        }
        var feed = """
            <?xml version="1.0"?><rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>t</title>
            """
        for index in 0..<count {
            let photo = index % 2 == 0 ? "chelsea-the-cat.jpg" : "aitzgorri-autumn.jpg"
            feed += "<item><guid>item-\(index)</guid><title>Pin \(index)</title>"
            feed += "<description>Caption number \(index), long enough to wrap once or twice.</description>"
            feed += "<media:content url=\"\(photo)\" medium=\"image\"/></item>\n"
        }
        feed += "</channel></rss>\n"
        try feed.write(to: folder.appendingPathComponent("feed.xml"), atomically: true, encoding: .utf8)
        return folder
    }

    /// Every file of a folder with its bytes.
    static func snapshot(_ folder: URL) -> [String: Data] {
        var files: [String: Data] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] {
            files[name] = try? Data(contentsOf: folder.appendingPathComponent(name))
        }
        return files
    }

    /// 20 runs into a folder holding an earlier run's pages (another page size), each killed with SIGKILL at a
    /// random moment of its run: afterwards the folder is always exactly the earlier run's or exactly the new
    /// run's, and the next run cleans up what the killed one left beside it.
    @Test func aKilledRunLeavesTheOldPagesOrTheNewNeverAMix() async throws {
        let feeds = try Self.feedFolder(items: 3000)
        let feed = feeds.appendingPathComponent("feed.xml").path
        let work = try CommandRunner.temporaryDirectory()
        let out = work.appendingPathComponent("pages")
        @discardableResult
        func layout(pageSize: Int, into folder: URL) async throws -> Duration {
            let run = try await CommandRunner.run(
                ["layout", feed, "--out", folder.path, "--page-size", String(pageSize), "--quiet", "--no-cache"])
            #expect(run.status == 0, "\(run.stderr)")
            return run.duration
        }
        try await layout(pageSize: 20, into: work.appendingPathComponent("new"))
        let new = Self.snapshot(work.appendingPathComponent("new"))
        try await layout(pageSize: 25, into: out)
        let old = Self.snapshot(out)
        #expect(new.count == 150 && old.count == 120)

        // How long a whole run takes here, so the kills spread over all of it.
        let runTime = try await layout(pageSize: 25, into: work.appendingPathComponent("timing"))
        var random = SplitMix64(seed: 20_261_125)
        var outcomes = (old: 0, new: 0)
        for attempt in 0..<20 {
            let process = Process()
            process.executableURL = CommandRunner.binary
            process.arguments = ["layout", feed, "--out", out.path, "--page-size", "20", "--quiet", "--no-cache"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            try await Task.sleep(for: runTime * Double.random(in: 0.05...1.1, using: &random))
            kill(process.processIdentifier, SIGKILL)
            _ = process.waitForExit()
            let now = Self.snapshot(out)
            if now == old {
                outcomes.old += 1
            } else if now == new {
                outcomes.new += 1
                try await layout(pageSize: 25, into: out)  // back to the old pages for the next attempt
                #expect(Self.snapshot(out) == old)
            } else {
                Issue.record("attempt \(attempt): the folder holds \(now.count) files, neither run's pages")
            }
        }
        #expect(outcomes.old > 0, "some kills must land mid-run: \(outcomes)")
        // What a killed run left beside the folder goes with the next run.
        try await layout(pageSize: 20, into: out)
        #expect(Self.snapshot(out) == new)
        let beside = try FileManager.default.contentsOfDirectory(atPath: work.path)
        #expect(beside.sorted() == ["new", "pages", "timing"], "\(beside)")
    }

    /// A second run on a folder another run is writing stops at once with a clear message and changes nothing.
    @Test func aSecondRunOnTheSameFolderIsRefused() async throws {
        let feeds = try Self.feedFolder(items: 300)
        let out = try CommandRunner.temporaryDirectory().appendingPathComponent("pages")
        // The first run reads its feed from standard input, so it holds the folder until the input ends.
        let first = Process()
        first.executableURL = CommandRunner.binary
        first.arguments = ["layout", "-", "--out", out.path, "--quiet", "--no-cache"]
        first.currentDirectoryURL = feeds
        let input = Pipe()
        first.standardInput = input
        first.standardOutput = FileHandle.nullDevice
        first.standardError = FileHandle.nullDevice
        try first.run()
        // The feed's first bytes tell it standard input holds a feed, not a list; then it takes the folder.
        let feed = try Data(contentsOf: feeds.appendingPathComponent("feed.xml"))
        input.fileHandleForWriting.write(feed.prefix(4096))
        let lock = out.deletingLastPathComponent().appendingPathComponent(".pages.feedlayout-lock").path
        let deadline = ContinuousClock.now + .seconds(60)
        while !FileManager.default.fileExists(atPath: lock) && first.isRunning && ContinuousClock.now < deadline {
            usleep(10_000)
        }
        let second = try await CommandRunner.run(["layout", CommandRunner.sampleFeed, "--out", out.path, "--quiet"])
        input.fileHandleForWriting.write(feed.dropFirst(4096))
        try input.fileHandleForWriting.close()
        let firstStatus = first.waitForExit()
        #expect(second.status == 1)
        #expect(second.stderr.contains("another feedlayout run is writing this folder"), "\(second.stderr)")
        #expect(firstStatus == 0)
        #expect(Self.snapshot(out).count == 6, "the first run's pages only")
    }
}
