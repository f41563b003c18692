import FeedLayoutTestSupport
import Foundation
import Testing
import WaterfallLayout

@testable import LayoutPages

/// Option values and cursors a hostile (or careless) user sends: each ends in exit 2 and a message naming what is
/// wrong, at once, never in a trap or a run that eats the machine's memory.
@Suite struct HostileOptionsEndToEndTests {
    @Test(arguments: [
        (["--width", "1e300"], "invalid --width: must be a length from 0 to 1,000,000 px, got 1e+300"),
        (["--width", "1e12"], "invalid --width: must be a length from 0 to 1,000,000 px, got 1000000000000"),
        (["--width", "-100"], "invalid --width: must be a length from 0 to 1,000,000 px, got -100"),
        (["--width", "nan"], "invalid --width: must be a length from 0 to 1,000,000 px, got nan"),
        (["--inset", "1e308"], "invalid --inset"),
        (["--inset", "-5,0,0,0"], "invalid --inset"),
        (["--scale", "1e300"], "invalid --scale: must be a number from 0.1 to 16, got 1e+300"),
        (["--cell-padding", "1e300"], "invalid --cell-padding"),
        (["--max-photo-height", "1e300"], "invalid --max-photo-height"),
        (["--order-tolerance", "1e300"], "invalid --order-tolerance"),
        (["--row-gap", "1e18"], "invalid --row-gap"),
        (["--columns", "1001"], "invalid --columns: must be from 1 to 1,000, got 1001"),
        (["--page-size", "100001"], "invalid --page-size: must be from 1 to 100,000, got 100001"),
        (["--title-lines", "1001"], "invalid --title-lines"),
        (["--font-size", "1001"], "invalid --font-size"),
        (["--fallback-aspect-ratio", "1e-300"], "invalid --fallback-aspect-ratio"),
        (["--breakpoints", "375:2,768:1001"], "--breakpoints 768:1001: invalid --columns"),
    ])
    func layoutRefusesOptionsOutOfBounds(arguments: [String], message: String) async throws {
        let output = try await CommandRunner.run(["layout", CommandRunner.sampleFeed, "--no-cache"] + arguments)
        #expect(output.status == 2, "\(arguments): \(output.stderr)")
        #expect(output.stderr.contains(message), "\(arguments): \(output.stderr)")
        #expect(output.stdout.isEmpty)
    }

    @Test(arguments: [
        (["measure", "--width", "-5", "text"], "invalid --width"),
        (["measure", "--width", "200", "--max-lines", "1001", "text"], "invalid --max-lines"),
        (["probe", "sample-feed/photos/espresso.jpg", "--timeout", "1e300"], "invalid --timeout"),
        (["probe", "sample-feed/photos/espresso.jpg", "--concurrency", "100000"], "invalid --concurrency"),
        (
            ["preview", CommandRunner.sampleFeed, "--out", "/nonexistent", "--png-max-height", "0"],
            "invalid --png-max-height"
        ),
    ])
    func otherCommandsRefuseOptionsOutOfBounds(arguments: [String], message: String) async throws {
        let output = try await CommandRunner.run(arguments)
        #expect(output.status == 2, "\(arguments): \(output.stderr)")
        #expect(output.stderr.contains(message), "\(arguments): \(output.stderr)")
    }

    /// The help says what each option allows.
    @Test func helpShowsTheBounds() async throws {
        let output = try await CommandRunner.run(["layout", "--help"])
        #expect(output.stdoutText.contains("from 0 to 1,000,000 px"))
        #expect(output.stdoutText.contains("from 1 to 100,000"))
    }

    /// A cursor of the sample feed re-encoded with hostile fields and a valid checksum: exit 2, a message that
    /// says which field does not fit the run.
    @Test func hostileCursorsExitWithTwo() async throws {
        let options = ["--width", "1024", "--columns", "4", "--page-size", "5", "--no-cache"]
        let first = try await CommandRunner.run(["layout", CommandRunner.sampleFeed, "--max-pages", "2"] + options)
        let line = first.stdoutText.split(separator: "\n")[1]
        let valid = try LayoutCursor(decoding: try #require(try PageFile(Data(line.utf8)).cursor))
        guard case .waterfall(let state) = valid.state else { throw CursorError.notAWaterfall }

        var pageIndex = valid
        pageIndex.pageIndex = Int.max
        var columns = state
        columns.columnHeights.append(100)
        var columnCursor = valid
        columnCursor.state = .waterfall(columns)
        var heights = state
        heights.columnHeights[0] = 1 << 62
        heights.contentBottom = Int.max
        var heightCursor = valid
        heightCursor.state = .waterfall(heights)
        for (cursor, message) in [
            (pageIndex, "cannot follow 10 items"), (columnCursor, "has 5 columns; this layout has 4"),
            (heightCursor, "content bottom"),
        ] {
            let output = try await CommandRunner.run(
                ["layout", CommandRunner.sampleFeed, "--resume", cursor.encoded()] + options)
            #expect(output.status == 2, "\(output.stderr)")
            #expect(output.stderr.contains(message), "\(output.stderr)")
            #expect(output.stdout.isEmpty)
        }
    }

    /// Replays `FuzzRegressions/options/`: argument lists the `OptionFuzzer` (FuzzTesting/) found interesting, split at
    /// NUL and newline bytes as it splits them, through the real `layout` command: each ends in pages (exit 0, or 1 for
    /// the sample's broken photos) or a message and exit 2, never a trap or a signal.
    @Test func fuzzedOptionInputsStayFixed() async throws {
        let folder = CommandRunner.repositoryRoot.appendingPathComponent("Tests/EndToEndTests/FuzzRegressions/options").path
        let inputs = try TestInputs.files(in: folder)
        // An empty folder would let this test pass without checking anything.
        try #require(inputs.count >= 10, "\(folder) holds the option fuzzer's inputs to replay")
        for (name, bytes) in inputs {
            let arguments = bytes.split(whereSeparator: { $0 == 0 || $0 == 0x0A }).map { String(decoding: $0, as: UTF8.self) }
            let output = try await CommandRunner.run(
                ["layout", CommandRunner.sampleFeed, "--no-cache", "--max-pages", "2"] + arguments)
            // Exit 1 is the sample feed's own broken photos (reported, laid out); never a trap or a signal.
            #expect([0, 1, 2].contains(output.status), "\(name) \(arguments): exit \(output.status), \(output.stderr)")
            #expect(output.status == 0 || !output.stderr.isEmpty, "\(name): exit \(output.status) without a message")
        }
    }
}

private enum CursorError: Error { case notAWaterfall }
