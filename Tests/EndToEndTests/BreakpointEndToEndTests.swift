import Foundation
import Testing

/// `--breakpoints`: several layouts from one pass over the feed, each exactly the layout a run with its width
/// and column count makes.
@Suite(.serialized) struct BreakpointEndToEndTests {
    static let options = ["--inset", "12", "--gutter", "10", "--cell-padding", "4", "--page-size", "15"]

    @Test func eachBreakpointsPagesAreThoseOfASingleRunWithItsWidthAndColumns() async throws {
        let directory = try CommandRunner.temporaryDirectory()
        let output = try await CommandRunner.run(
            ["layout", CommandRunner.sampleFeed, "--out", directory.path, "--breakpoints", "375:2,768:3,1279.5:5"]
                + Self.options)
        #expect(output.status == 1, "the sample has a missing and a corrupt image; stderr: \(output.stderr)")
        // 1279.5 CSS px is 1280 device pixels at scale 1: the grid is whole device pixels; the folder keeps the name given.
        #expect(output.stderr.contains("3 layouts: 375 px: 2 columns, 768 px: 3 columns, 1280 px: 5 columns"))
        for (width, columns) in [("375", "2"), ("768", "3"), ("1279.5", "5")] {
            let single = try CommandRunner.temporaryDirectory()
            _ = try await CommandRunner.run(
                ["layout", CommandRunner.sampleFeed, "--out", single.path, "--width", width, "--columns", columns]
                    + Self.options)
            let names = try FileManager.default.contentsOfDirectory(atPath: single.path).sorted()
            #expect(names.count >= 2)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent(width).path).sorted() == names)
            for name in names {
                let fromBreakpoints = try Data(contentsOf: directory.appendingPathComponent(width).appendingPathComponent(name))
                let fromSingle = try Data(contentsOf: single.appendingPathComponent(name))
                #expect(fromBreakpoints == fromSingle, "\(width)/\(name) differs from the single run's")
            }
        }
    }

    @Test func ndjsonPagesSayWhichLayoutTheyBelongTo() async throws {
        let output = try await CommandRunner.run(
            ["layout", CommandRunner.sampleFeed, "--breakpoints", "400:2,900:4", "--quiet"] + Self.options)
        let pages = try String(decoding: output.stdout, as: UTF8.self).split(separator: "\n").map {
            try PageFile(Data($0.utf8))
        }
        let byWidth = Dictionary(grouping: pages) { number($0.layout["width"]) }
        #expect(Set(byWidth.keys) == [400, 900])
        for (width, layoutPages) in byWidth {
            #expect(layoutPages.map { $0.json["page"] as! [String: Any] }.map { $0["index"] as! Int }
                == Array(0..<layoutPages.count))
            #expect(layoutPages.flatMap(\.items).count == LayoutEndToEndTests.sampleItemCount, "width \(width)")
            #expect(layoutPages.allSatisfy { $0.layout["columns"] as! Int == (width == 400 ? 2 : 4) })
        }
    }

    @Test func aBreakpointsCursorResumesTheSingleLayout() async throws {
        let directory = try CommandRunner.temporaryDirectory()
        _ = try await CommandRunner.run(
            ["layout", CommandRunner.sampleFeed, "--out", directory.path, "--breakpoints", "375:2,768:3"] + Self.options)
        let first = try PageFile(Data(contentsOf: directory.appendingPathComponent("768/page-0001.json")))
        let second = try Data(contentsOf: directory.appendingPathComponent("768/page-0002.json"))
        let resumed = try await CommandRunner.run(
            ["layout", CommandRunner.sampleFeed, "--width", "768", "--columns", "3", "--max-pages", "1", "--quiet",
             "--resume", first.cursor!] + Self.options)
        #expect(try PageFile(resumed.stdout).json as NSDictionary == PageFile(second).json as NSDictionary)
    }

    @Test func badBreakpointsAreUsageErrorsNamingThePart() async throws {
        for (list, part) in [("375:2,768", "'768'"), ("375:0", "'375:0'"), ("-5:2", "'-5:2'"), ("375:2,375:3", "375 appears twice")] {
            let output = try await CommandRunner.run(["layout", CommandRunner.sampleFeed, "--breakpoints=" + list])
            #expect(output.status == 2, "\(list)")
            #expect(output.stderr.contains(part), "\(list): \(output.stderr)")
        }
        let output = try await CommandRunner.run(
            ["layout", CommandRunner.sampleFeed, "--breakpoints", "375:2,768:3", "--resume", "fl1.x"])
        #expect(output.status == 2)
        #expect(output.stderr.contains("--resume continues one layout"))
    }
}
