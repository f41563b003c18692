import Foundation
import Testing

/// Runs the built `feedlayout` on `sample-feed/` and checks the layout contract of DESIGN.md from the outside.
@Suite(.serialized) struct LayoutEndToEndTests {
    /// The options every run here uses; the checks below depend on them (insets 16, row gap 12).
    /// The golden files' options too: `scripts/record-golden` passes the same.
    static let options = ["--width", "1024", "--columns", "4", "--inset", "16", "--gutter", "16", "--row-gap", "12",
                          "--cell-padding", "6", "--page-size", "12"]

    /// The number of items in the sample feed, counted from the XML text, independently of our parser.
    static var sampleItemCount: Int {
        let text = try! String(contentsOfFile: CommandRunner.sampleFeed, encoding: .utf8)
        return text.components(separatedBy: "<item>").count - 1
    }

    func layOutSample(extra: [String] = []) async throws -> (CommandRunner.Output, [PageFile], URL) {
        let directory = try CommandRunner.temporaryDirectory()
        let output = try await CommandRunner.run(["layout", CommandRunner.sampleFeed, "--out", directory.path] + Self.options + extra)
        return (output, try PageFile.readAll(in: directory), directory)
    }

    @Test func everyItemIsPlacedExactlyOnceWithoutOverlap() async throws {
        let (output, pages, _) = try await layOutSample()
        // The sample feed has a missing and a corrupt image on purpose: exit 1, both still laid out.
        #expect(output.status == 1, "stderr: \(output.stderr)")
        #expect(output.stderr.contains("laid out \(Self.sampleItemCount) items"))
        let items = pages.flatMap(\.items)
        #expect(Self.sampleItemCount >= 48)
        #expect(items.map { $0["index"] as! Int } == Array(0..<Self.sampleItemCount))
        let frames = items.map { Frame($0["frame"]) }
        for (i, a) in frames.enumerated() {
            for (j, b) in frames.enumerated() where j > i {
                #expect(!a.overlaps(b), "items \(i) and \(j) overlap: \(a) \(b)")
            }
        }
        // Every frame inside the container's columns.
        for frame in frames { #expect(frame.x >= 16 && frame.maxX <= 1024 - 16) }
    }

    @Test func eachItemSitsInTheColumnThatWasShortestWhenItWasPlaced() async throws {
        let (_, pages, _) = try await layOutSample()
        let layout = pages[0].layout
        let columns = layout["columns"] as! Int
        let columnWidth = number(layout["columnWidth"])
        var heights = Array(repeating: 16.0, count: columns)
        for item in pages.flatMap(\.items) {
            let shortest = heights.min()!
            let expected = heights.firstIndex(of: shortest)!
            let frame = Frame(item["frame"])
            #expect(item["column"] as! Int == expected, "item \(item["index"]!)")
            #expect(frame.y == shortest)
            #expect(frame.x == 16 + Double(expected) * (columnWidth + 16))
            heights[expected] = frame.maxY + 12
        }
        #expect(pages.last!.json["columnHeights"] as! [Double] == heights)
    }

    @Test func photoFramesKeepTheDisplayAspectRatioAndSitInsideTheirCells() async throws {
        let (_, pages, _) = try await layOutSample()
        for item in pages.flatMap(\.items) {
            let photo = item["photo"] as! [String: Any]
            let frame = Frame(photo["frame"])
            let cell = Frame(item["frame"])
            let annotation = Frame((item["annotation"] as! [String: Any])["frame"])
            let expectedHeight = frame.width * number(photo["height"]) / number(photo["width"])
            #expect(abs(frame.height - expectedHeight) <= 0.5, "item \(item["index"]!): \(frame) vs \(expectedHeight)")
            #expect(frame.x == cell.x + 6 && frame.y == cell.y + 6 && frame.maxX == cell.maxX - 6)
            #expect(annotation.maxY == cell.maxY - 6)
            #expect(annotation.y >= frame.maxY)
        }
    }

    /// Ground truth from sample-feed/SOURCES.md, checked independently with Pillow when the feed was made.
    @Test func realHeaderSizesWinOverDeclaredOnesAndOrientationIsApplied() async throws {
        let (_, pages, _) = try await layOutSample()
        let byURL = Dictionary(
            pages.flatMap(\.items).compactMap { item -> (String, [String: Any])? in
                let photo = item["photo"] as! [String: Any]
                return (photo["url"] as? String).map { ($0, photo) }
            }, uniquingKeysWith: { first, _ in first })
        func size(_ url: String) -> [Double] { [number(byURL[url]?["width"]), number(byURL[url]?["height"])] }
        // Stored 900×600 with EXIF orientation 6: displays as a portrait.
        #expect(size("photos/djembe-and-wine.jpg") == [600, 900])
        #expect(byURL["photos/djembe-and-wine.jpg"]?["orientation"] as? Int == 6)
        // Declared 800×600 in the feed, really a 600×900 portrait.
        #expect(size("photos/spaniels-at-the-door.jpg") == [600, 900])
        #expect(byURL["photos/spaniels-at-the-door.jpg"]?["sizeFrom"] as? String == "header")
        #expect(size("photos/nuthatch-cmyk.jpg") == [880, 495])
        #expect(size("photos/sunset-over-the-hills.jpg") == [900, 600])
        #expect(size("photos/hubble-deep-field.png") == [600, 523])
        #expect(size("photos/yellow-flower-rounded.png") == [600, 400])
    }

    @Test func missingAndCorruptImagesAreLaidOutWithWarnings() async throws {
        let (_, pages, _) = try await layOutSample()
        let items = pages.flatMap(\.items)
        func item(_ url: String) -> [String: Any]? {
            items.first { (($0["photo"] as! [String: Any])["url"] as? String) == url }
        }
        let missing = try #require(item("photos/does-not-exist.jpg"))
        let corrupt = try #require(item("photos/corrupt.jpg"))
        for broken in [missing, corrupt] {
            let warnings = broken["warnings"] as! [[String: Any]]
            #expect(!warnings.isEmpty)
            #expect(warnings.contains { ($0["message"] as! String).contains((broken["photo"] as! [String: Any])["url"] as! String) })
        }
        // The missing image declares no size: fallback aspect ratio 1. The corrupt one declares 640×480.
        #expect((missing["photo"] as! [String: Any])["sizeFrom"] as? String == "fallback")
        let corruptPhoto = corrupt["photo"] as! [String: Any]
        #expect(corruptPhoto["sizeFrom"] as? String == "declared")
        #expect([number(corruptPhoto["width"]), number(corruptPhoto["height"])] == [640, 480])
    }

    @Test func outputIsByteIdenticalAcrossRuns() async throws {
        let (_, _, first) = try await layOutSample()
        let (_, _, second) = try await layOutSample()
        let names = try FileManager.default.contentsOfDirectory(atPath: first.path).sorted()
        #expect(names == (try FileManager.default.contentsOfDirectory(atPath: second.path).sorted()))
        #expect(names.count == (Self.sampleItemCount + 11) / 12)
        for name in names {
            #expect(
                try Data(contentsOf: first.appendingPathComponent(name))
                    == Data(contentsOf: second.appendingPathComponent(name)), "\(name) differs")
        }
    }

    /// DESIGN.md promises the same bytes on every machine: nothing in a page may depend on where the feed lives.
    @Test func outputDoesNotDependOnWhereTheFeedLives() async throws {
        let copy = try CommandRunner.temporaryDirectory().appendingPathComponent("elsewhere")
        try FileManager.default.copyItem(
            at: CommandRunner.repositoryRoot.appendingPathComponent("sample-feed"), to: copy)
        let original = try await CommandRunner.run(["layout", CommandRunner.sampleFeed] + Self.options)
        let moved = try await CommandRunner.run(["layout", copy.appendingPathComponent("feed.xml").path] + Self.options)
        #expect(!original.stdout.isEmpty)
        #expect(moved.stdout == original.stdout)
        #expect(!original.stdoutText.contains(CommandRunner.repositoryRoot.path))
    }

    /// The cursor carries everything: column heights, the round robin's or grid-lanes' position, the quality totals.
    @Test(arguments: [
        [String](),
        ["--placement", "left-to-right"],
        ["--placement", "right-to-left", "--right-to-left"],
        ["--order-tolerance", "40", "--scale", "3"],
        ["--placement", "grid-lanes", "--order-tolerance", "normal", "--right-to-left"],
    ])
    func pageByPageThroughCursorsEqualsOneRun(extra: [String]) async throws {
        let options = Self.options + extra
        let whole = try await CommandRunner.run(["layout", CommandRunner.sampleFeed] + options)
        let wholePages = whole.stdoutText.split(separator: "\n").map { String($0) }
        #expect(wholePages.count == (Self.sampleItemCount + 11) / 12)
        var resumed: [String] = []
        var cursor: String?
        repeat {
            let output = try await CommandRunner.run(
                ["layout", CommandRunner.sampleFeed, "--max-pages", "1", "--quiet"] + options
                    + (cursor.map { ["--resume", $0] } ?? []))
            let line = output.stdoutText.trimmingCharacters(in: .newlines)
            #expect(!line.contains("\n"), "one page per run")
            resumed.append(line)
            cursor = try PageFile(Data(line.utf8)).cursor
        } while cursor != nil && resumed.count <= wholePages.count
        #expect(resumed == wholePages)
    }

    /// The sample feed's pages, byte for byte. Any change to parsing, probing, measuring or placement shows up
    /// here; when the change is intended, re-record them with `scripts/record-golden` and review the diff. This test
    /// only compares: nothing in its environment makes it write the files it checks against.
    @Test func samplePagesMatchTheGoldenFiles() async throws {
        let golden = CommandRunner.repositoryRoot.appendingPathComponent("Tests/EndToEndTests/Golden")
        let directory = try CommandRunner.temporaryDirectory()
        let run = try await CommandRunner.run(
            ["layout", CommandRunner.sampleFeed, "--out", directory.path, "--pretty", "--quiet"] + Self.options)
        // 1: some inputs failed (the sample feed's two broken photos, reported in their pages).
        #expect(run.status == 1, "\(run.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(!names.isEmpty)
        #expect(names == (try FileManager.default.contentsOfDirectory(atPath: golden.path).sorted()))
        for name in names {
            let produced = try Data(contentsOf: directory.appendingPathComponent(name))
            let expected = try Data(contentsOf: golden.appendingPathComponent(name))
            #expect(produced == expected, "\(name) differs from Tests/EndToEndTests/Golden/\(name)")
        }
    }

    /// Every page validates against the committed JSON Schema, whatever the options.
    @Test(arguments: [
        [String](),
        ["--right-to-left", "--scale", "2", "--placement", "right-to-left"],
        ["--page-height", "700", "--max-photo-height", "300", "--min-photo-height", "80"],
        ["--title-lines", "0", "--text-lines", "0", "--order-tolerance", "30"],
        ["--placement", "grid-lanes", "--order-tolerance", "12.5"],
    ])
    func pagesMatchTheJSONSchema(extra: [String]) async throws {
        let output = try await CommandRunner.run(["layout", CommandRunner.sampleFeed] + Self.options + extra)
        #expect(!output.stdout.isEmpty)
        let validation = try await CommandRunner.runTool(
            CommandRunner.repositoryRoot.appendingPathComponent("scripts/validate-pages").path, ["-"], stdin: output.stdout)
        #expect(validation.status == 0, "\(validation.stderr)")
        #expect(validation.stderr.contains(" 0 schema errors"))
    }

    @Test func aCursorFromOtherOptionsIsRefused() async throws {
        let first = try await CommandRunner.run(["layout", CommandRunner.sampleFeed, "--max-pages", "1"] + Self.options)
        let cursor = try #require(try PageFile(Data(first.stdoutText.split(separator: "\n")[0].utf8)).cursor)
        let other = try await CommandRunner.run(
            ["layout", CommandRunner.sampleFeed, "--resume", cursor] + Self.options + ["--columns", "3"])
        #expect(other.status == 2)
        #expect(other.stderr.contains("--resume"))
        var damaged = cursor
        damaged.removeLast(3)
        let broken = try await CommandRunner.run(["layout", CommandRunner.sampleFeed, "--resume", damaged] + Self.options)
        #expect(broken.status == 2)
        #expect(broken.stderr.contains("cursor is not valid"))
    }
}

@Suite struct CommandLineContractTests {
    @Test(arguments: [
        ["layout", "sample-feed/feed.xml", "--columns", "0"],
        ["layout", "sample-feed/feed.xml", "--inset", "1,2"],
        ["layout", "sample-feed/feed.xml", "--line-height", "tall"],
        ["layout", "sample-feed/feed.xml", "--width", "10", "--inset", "8"],
        ["layout"],
        ["measure", "hello"],
        ["frobnicate"],
    ])
    func badUsageExitsWithTwoAndSaysWhy(arguments: [String]) async throws {
        let output = try await CommandRunner.run(arguments)
        #expect(output.status == 2, "\(arguments): \(output.stderr)")
        #expect(!output.stderr.isEmpty)
        #expect(output.stdout.isEmpty)
    }

    /// Every subcommand's help shows how to use it, with lines that fit a terminal.
    @Test(arguments: ["layout", "ingest", "probe", "measure", "preview"])
    func helpHasExamples(subcommand: String) async throws {
        let output = try await CommandRunner.run([subcommand, "--help"])
        #expect(output.status == 0)
        let text = output.stdoutText
        #expect(text.contains("Example"), "\(subcommand) --help has no examples")
        let examples = text.components(separatedBy: "Example").dropFirst().joined().components(separatedBy: "USAGE:")[0]
        #expect(examples.contains("feedlayout \(subcommand)"))
        #expect(examples.split(separator: "\n").allSatisfy { $0.count <= 80 }, "\(subcommand)'s examples wrap")
    }

    @Test func aMissingFeedIsAnInputFailureNamingThePath() async throws {
        let output = try await CommandRunner.run(["layout", "no/such/feed.xml"])
        #expect(output.status == 1)
        #expect(output.stderr.contains("no/such/feed.xml"))
    }

    /// An image path escaping the feed's folder is refused by the feed reader, which drops the image: the item is
    /// still laid out (fallback aspect ratio) and its warnings say what happened and where.
    @Test func aRefusedImagePathStillLaysTheItemOut() async throws {
        let directory = try CommandRunner.temporaryDirectory()
        let feed = directory.appendingPathComponent("feed.xml")
        try """
            <rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>t</title>
            <item><title>Escape</title><guid>a</guid>
            <media:content url="../../../etc/hostname.jpg" medium="image" width="400" height="300"/></item>
            </channel></rss>
            """.write(to: feed, atomically: true, encoding: .utf8)
        let output = try await CommandRunner.run(["layout", feed.path, "--no-cache"])
        // The refused photo is an unread image: a failed input, though its item is laid out.
        #expect(output.status == 1, "\(output.stderr)")
        let item = try #require(try PageFile(Data(output.stdoutText.split(separator: "\n")[0].utf8)).items.first)
        // Issue 3: the item keeps its image reference (never read) and lays out at the declared size.
        let photo = item["photo"] as! [String: Any]
        #expect(photo["sizeFrom"] as? String == "declared")
        #expect(photo["url"] as? String == "../../../etc/hostname.jpg")
        #expect(number(photo["width"]) == 400 && number(photo["height"]) == 300)
        let warnings = item["warnings"] as! [[String: Any]]
        let refusal = try #require(warnings.first { $0["code"] as? String == "refusedPath" })
        #expect(refusal["line"] as? Int == 3)
        #expect(!warnings.contains { $0["code"] as? String == "noImage" })
    }

    @Test func ingestPrintsOneRecordPerItem() async throws {
        let output = try await CommandRunner.run(["ingest", CommandRunner.sampleFeed])
        #expect(output.status == 0, "\(output.stderr)")
        let lines = output.stdoutText.split(separator: "\n")
        #expect(lines.count == LayoutEndToEndTests.sampleItemCount)
        let first = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as! [String: Any]
        #expect(first["index"] as? Int == 0)
        #expect(first["title"] as? String == "Espresso")
        #expect((first["image"] as? [String: Any])?["url"] as? String == "photos/espresso.jpg")
    }

    @Test func probeReportsEachImageAndFailsForBrokenOnes() async throws {
        let output = try await CommandRunner.run([
            "probe", "sample-feed/photos/djembe-and-wine.jpg", "sample-feed/photos/corrupt.jpg",
            "sample-feed/photos/hubble-deep-field.png",
        ])
        #expect(output.status == 1)
        let records = try output.stdoutText.split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
        #expect(records.count == 3)
        #expect(records[0]["displayWidth"] as? Int == 600 && records[0]["displayHeight"] as? Int == 900)
        #expect(records[0]["orientation"] as? Int == 6)
        #expect(records[1]["error"] != nil)
        #expect(records[2]["interlaced"] as? Bool == true)
    }

    @Test func measureReadsStdinLinesAndGivesEmptyLinesZeroHeight() async throws {
        let output = try await CommandRunner.run(
            ["measure", "--width", "120"], stdin: Data("A short caption\n\nA caption long enough that it must wrap onto several lines\n".utf8))
        #expect(output.status == 0, "\(output.stderr)")
        let records = try output.stdoutText.split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
        #expect(records.count == 3)
        #expect(records[1]["lines"] as? Int == 0 && number(records[1]["height"]) == 0)
        #expect((records[2]["lines"] as! Int) > (records[0]["lines"] as! Int))
    }

    /// Thousands of texts as arguments, an option among them and dash-led texts after `--`: the same records, in the
    /// same order, as the same texts on standard input (kept under a pipe's 64 KiB: the runner writes all of standard
    /// input before it reads the output).
    @Test func measureTextsAsArgumentsMatchStandardInputLines() async throws {
        let texts = (0..<1_500).map { "caption \($0) " + String(repeating: "word ", count: $0 % 9) }
        let tail = ["-5 degrees", "after the dash", "-", "last"]
        let fromArguments = try await CommandRunner.run(
            ["measure"] + texts[..<500] + ["--width", "120"] + texts[500...] + ["--"] + tail)
        let fromStdin = try await CommandRunner.run(
            ["measure", "--width", "120"], stdin: Data((texts + tail).joined(separator: "\n").utf8))
        #expect(fromArguments.status == 0, "\(fromArguments.stderr.prefix(500))")
        #expect(fromArguments.stdoutText.split(separator: "\n").count == texts.count + tail.count)
        #expect(fromArguments.stdout == fromStdin.stdout)
    }

    @Test func previewWritesCardsWithTheAnnotationContract() async throws {
        let directory = try CommandRunner.temporaryDirectory()
        let output = try await CommandRunner.run(["preview", CommandRunner.sampleFeed, "--out", directory.path, "--width", "800"])
        #expect(output.status == 1, "\(output.stderr)")
        let html = try String(contentsOf: directory.appendingPathComponent("index.html"), encoding: .utf8)
        #expect(html.components(separatedBy: "data-index=").count - 1 == LayoutEndToEndTests.sampleItemCount)
        #expect(html.components(separatedBy: "data-role=\"annotation\"").count - 1 == LayoutEndToEndTests.sampleItemCount)
        #expect(html.contains("sample-feed/photos/espresso.jpg"))
        // The frames overlay's column guides: one per column of the 800 px grid (3 columns of 245 px), as HTML. They
        // once came out as a debug description of GRDB's SQL type.
        #expect(html.components(separatedBy: "<div class=\"column\" style=\"left:").count - 1 == 3)
        #expect(html.contains("<div class=\"column\" style=\"left:16px;width:245px\"></div>"))
        #expect(!html.contains("SQL("))
    }
}
