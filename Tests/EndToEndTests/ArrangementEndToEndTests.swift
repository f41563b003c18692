import Foundation
import Testing

/// Sections, flow rows and the horizontal axis through the CLI: pages, cursors and the page schema.
@Suite(.serialized) struct ArrangementEndToEndTests {
    static let base = ["--width", "1024", "--columns", "4", "--inset", "16", "--gutter", "16", "--row-gap", "12",
                       "--cell-padding", "6", "--page-size", "10", "--image-root", sampleFolder]
    static let sampleFolder = URL(fileURLWithPath: CommandRunner.sampleFeed).deletingLastPathComponent().path
    static let sections = ["--section-header-height", "40", "--section-footer-height", "12", "--section-inset",
                           "8,4,8,4", "--decoration-outset", "3"]
    static let flow = ["--mode", "flow", "--row-photo-height", "120"]
    static let horizontal = ["--axis", "horizontal", "--height", "900", "--columns", "3", "--max-photo-width", "400"]

    /// The sample feed with `<fl:section>` on every item: four seasons of 13 items, the last section shorter.
    static let sectionedFeed = try! CommandRunner.sampleFeedCopy { index in
        "<fl:section>\(["Spring", "Summer", "Autumn", "Winter"][min(index / 13, 3)])</fl:section>"
    }

    func pages(_ feed: String, _ options: [String]) async throws -> [PageFile] {
        let output = try await CommandRunner.run(["layout", feed, "--quiet"] + options)
        #expect(output.status <= 1, "\(output.stderr)")
        return try output.stdoutText.split(separator: "\n").map { try PageFile(Data($0.utf8)) }
    }

    /// Flow rows and sections end pages only between rows or pins; the cursor carries the section, the follow
    /// lanes and the section key, so page by page gives the same bytes as one run.
    @Test(arguments: [
        sections,
        sections + ["--page-height", "900", "--page-size", "1000"],
        flow,
        flow + ["--align", "justified"] + sections,
        flow + ["--align", "data-end", "--follow"] + sections,
        flow + ["--align", "center", "--follow", "--page-size", "7"],
        horizontal,
        horizontal + sections + ["--placement", "left-to-right"],
        sections + ["--placement", "grid-lanes", "--order-tolerance", "30", "--page-size", "7"],
    ])
    func pageByPageThroughCursorsEqualsOneRun(extra: [String]) async throws {
        let options = Self.base + extra
        let whole = try await CommandRunner.run(["layout", Self.sectionedFeed, "--quiet"] + options)
        let wholePages = whole.stdoutText.split(separator: "\n").map { String($0) }
        #expect(wholePages.count >= 3)
        var resumed: [String] = []
        var cursor: String?
        repeat {
            let output = try await CommandRunner.run(
                ["layout", Self.sectionedFeed, "--max-pages", "1", "--quiet"] + options
                    + (cursor.map { ["--resume", $0] } ?? []))
            #expect(output.status <= 1, "\(output.stderr)")
            let line = output.stdoutText.trimmingCharacters(in: .newlines)
            resumed.append(line)
            cursor = try PageFile(Data(line.utf8)).cursor
        } while cursor != nil && resumed.count <= wholePages.count
        #expect(resumed == wholePages)
    }

    @Test(arguments: [sections, flow + ["--align", "end", "--follow"] + sections, horizontal + sections])
    func pagesMatchTheJSONSchema(extra: [String]) async throws {
        let output = try await CommandRunner.run(["layout", Self.sectionedFeed, "--quiet"] + Self.base + extra)
        let validation = try await CommandRunner.runTool(
            CommandRunner.repositoryRoot.appendingPathComponent("scripts/validate-pages").path, ["-"], stdin: output.stdout)
        #expect(validation.status == 0, "\(validation.stderr)")
        #expect(validation.stderr.contains(" 0 schema errors"))
    }

    /// Each section: a header band on top, its pins below the header and the section inset, a decoration that
    /// holds every pin, the footer under them; the next section starts where this one ends.
    @Test func sectionsAreFullWidthBreaksWithHeadersFootersAndDecorations() async throws {
        let pages = try await pages(Self.sectionedFeed, Self.base + Self.sections)
        let items = pages.flatMap(\.items)
        let events = pages.flatMap { ($0.json["sections"] as? [[String: Any]]) ?? [] }
        let starts = events.filter { $0["event"] as? String == "start" }
        let ends = events.filter { $0["event"] as? String == "end" }
        #expect(starts.map { $0["key"] as? String } == ["Spring", "Summer", "Autumn", "Winter"])
        #expect(ends.map { $0["index"] as? Int } == [0, 1, 2, 3])
        #expect(items.map { $0["section"] as? Int } == items.indices.map { min($0 / 13, 3) })
        var previousEnd = 16.0
        for (start, end) in zip(starts, ends) {
            let index = end["index"] as! Int
            let header = Frame(start["header"])
            #expect(header == Frame(end["header"]))
            #expect(number(start["start"]) == previousEnd && header.y == previousEnd)
            #expect(header.x == 16 && header.width == 1024 - 32 && header.height == 40)
            let members = items.filter { $0["section"] as? Int == index }
            #expect(members.first?["index"] as? Int == end["firstItem"] as? Int)
            #expect(members.last?["index"] as? Int == end["lastItem"] as? Int)
            let frames = members.map { Frame($0["frame"]) }
            let itemsTop = frames.map(\.y).min()!
            let itemsBottom = frames.map(\.maxY).max()!
            #expect(itemsTop == header.maxY + 8)
            let decoration = Frame(end["decoration"])
            for frame in frames {
                #expect(frame.x >= 16 + 4 && frame.maxX <= 1024 - 16 - 4)
                #expect(decoration.x <= frame.x && decoration.maxX >= frame.maxX)
                #expect(decoration.y <= frame.y && decoration.maxY >= frame.maxY)
            }
            #expect(decoration.y == itemsTop - 3 && decoration.maxY == itemsBottom + 3)
            let footer = Frame(end["footer"])
            #expect(footer.y == itemsBottom + 8 && footer.height == 12)
            #expect(number(end["end"]) == footer.maxY)
            previousEnd = footer.maxY
        }
        #expect(number(pages.last!.json["contentHeight"]) == previousEnd + 16)
    }

    /// Flow rows: pins of a row share a top, sit inside the insets one gap apart (justified: spread to both
    /// edges, except the section's last row), and every photo is fitted to the row photo height.
    @Test(arguments: ["start", "end", "center", "justified", "data-end"])
    func flowRowsAreAligned(align: String) async throws {
        let pages = try await pages(CommandRunner.sampleFeed, Self.base + Self.flow + ["--align", align])
        #expect(pages[0].layout["mode"] as? String == "flow")
        let items = pages.flatMap(\.items)
        #expect(items.map { $0["index"] as! Int } == Array(items.indices))
        let rows = Dictionary(grouping: items) { number(Frame($0["frame"]).y) }.sorted { $0.key < $1.key }
        #expect(rows.count >= 5)
        for (position, (_, row)) in rows.enumerated() {
            let frames = row.map { Frame($0["frame"]) }.sorted { $0.x < $1.x }
            #expect(frames.first!.x >= 16 && frames.last!.maxX <= 1024 - 16)
            for (left, right) in zip(frames, frames.dropFirst()) { #expect(right.x - left.maxX >= 16) }
            let isLast = position == rows.count - 1
            switch align {
            case "start": #expect(frames.first!.x == 16)
            case "end", "data-end": #expect(frames.last!.maxX == 1024 - 16)
            case "justified" where !isLast && frames.count > 1:
                #expect(frames.first!.x == 16 && frames.last!.maxX == 1024 - 16)
            case "center":
                let left = frames.first!.x - 16
                let right = 1024 - 16 - frames.last!.maxX
                #expect(abs(left - right) <= 1)
            default: break
            }
            // data-end fills from the right: feed order runs right to left.
            let order = row.sorted { Frame($0["frame"]).x < Frame($1["frame"]).x }.map { $0["index"] as! Int }
            #expect(order == (align == "data-end" ? order.sorted(by: >) : order.sorted()))
            for item in row {
                let photo = item["photo"] as! [String: Any]
                let slot = Frame(photo["slot"])
                #expect(slot.height == 120)
            }
        }
    }

    /// The horizontal axis: rows of the container's height, cells growing to the right, photos one slot tall,
    /// the annotation in its band under the photo.
    @Test func theHorizontalAxisGrowsToTheRight() async throws {
        let pages = try await pages(CommandRunner.sampleFeed, Self.base + Self.horizontal)
        #expect(pages[0].layout["axis"] as? String == "horizontal")
        let items = pages.flatMap(\.items)
        let frames = items.map { Frame($0["frame"]) }
        for (i, a) in frames.enumerated() {
            #expect(a.y >= 16 && a.maxY <= 900 - 16)
            for b in frames[(i + 1)...] { #expect(!a.overlaps(b)) }
        }
        let rowHeights = Set(frames.map(\.height))
        #expect(rowHeights.count == 1, "every cell is one row tall: \(rowHeights)")
        for item in items {
            let cell = Frame(item["frame"])
            let annotation = item["annotation"] as! [String: Any]
            let band = Frame(annotation["frame"])
            #expect(band.maxY == cell.maxY - 6)
            for block in ["title", "text"] {
                guard let text = annotation[block] as? [String: Any] else { continue }
                let frame = Frame(text["frame"])
                #expect(frame.y >= band.y && frame.maxY <= band.maxY && frame.width == band.width)
            }
            let photo = Frame((item["photo"] as! [String: Any])["frame"])
            #expect(photo.width <= 400)
        }
        let lanes = pages.last!.json["columnHeights"] as! [Double]
        #expect(lanes.count == 3)
        #expect(number(pages.last!.json["contentHeight"]) == frames.map(\.maxX).max()! + 16)
    }

    @Test(arguments: [
        (["--mode", "flow", "--axis", "horizontal", "--height", "800"], "--axis horizontal"),
        (["--axis", "horizontal"], "--height"),
        (["--align", "center"], "--mode flow"),
        (["--section-inset", "1,2"], "--section-inset"),
        (["--mode", "flow", "--breakpoints", "375:2,768:3"], "--breakpoints"),
    ])
    func badCombinationsAreRefused(arguments: [String], naming: String) async throws {
        let output = try await CommandRunner.run(["layout", CommandRunner.sampleFeed] + arguments)
        #expect(output.status == 2, "\(output.stderr)")
        #expect(output.stderr.contains(naming), "\(output.stderr)")
    }

    /// A cursor of a sectioned layout refuses a feed whose sections changed under it only through the item ids;
    /// a flow cursor refuses the waterfall (other options).
    @Test func aFlowCursorDoesNotResumeTheWaterfall() async throws {
        let first = try await CommandRunner.run(["layout", CommandRunner.sampleFeed, "--max-pages", "1"] + Self.base + Self.flow)
        let cursor = try #require(try PageFile(Data(first.stdoutText.split(separator: "\n")[0].utf8)).cursor)
        #expect(cursor.hasPrefix("fl4."))
        let other = try await CommandRunner.run(["layout", CommandRunner.sampleFeed, "--resume", cursor] + Self.base)
        #expect(other.status == 2)
        #expect(other.stderr.contains("other layout options"))
    }
}
