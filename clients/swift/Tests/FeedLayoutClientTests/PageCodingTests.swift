import Foundation
import XCTest

@testable import FeedLayoutClient

/// Decoding and encoding pages and the service's answers, against the fixtures (no service needed).
final class PageCodingTests: XCTestCase {
    func testEveryFixturePageDecodesAndEncodesToTheSameJSON() throws {
        var pages = 0
        for layout in Fixtures.layouts {
            for file in try Fixtures.pageFiles(layout) {
                try assertRoundTrip(try Data(contentsOf: file), "\(layout)/\(file.lastPathComponent)")
                pages += 1
            }
        }
        XCTAssertEqual(pages, 15)
    }

    func testJSONValuesCompareNumbersByValueAndFindDifferences() throws {
        XCTAssertNil(firstDifference(try jsonValue(Data(#"{"a":1.0,"b":[true,null]}"#.utf8)), try jsonValue(Data(#"{"b":[true,null],"a":1}"#.utf8))))
        XCTAssertEqual(try jsonValue(Data(#""caf\u00e9 \ud83d\udcf7""#.utf8)), .string("café 📷"))
        XCTAssertEqual(
            firstDifference(try jsonValue(Data(#"{"a":[1,{"b":2}]}"#.utf8)), try jsonValue(Data(#"{"a":[1,{"b":2.5}]}"#.utf8))),
            "$.a[1].b: number(2.0) vs number(2.5)")
        XCTAssertEqual(
            firstDifference(try jsonValue(Data(#"{"a":null}"#.utf8)), try jsonValue(Data(#"{}"#.utf8))),
            "$.a: missing on the right")
        XCTAssertNotNil(firstDifference(try jsonValue(Data("[true]".utf8)), try jsonValue(Data("[1]".utf8))))
    }

    func testTheFixturesHoldEveryKindOfMember() throws {
        let waterfall = try Fixtures.pages("waterfall/375")
        XCTAssertEqual(waterfall[0].layout.columns, 2)
        XCTAssertEqual(waterfall[0].layout.placement, .shortestFirst)
        XCTAssertNotNil(waterfall[0].items[0].photo.placeholder)
        XCTAssertNil(waterfall.last!.cursor)
        XCTAssertNotNil(waterfall[0].cursor)
        let flow = try Fixtures.pages("flow")[0]
        XCTAssertEqual(flow.layout.mode, .flow)
        XCTAssertEqual(flow.layout.rowPhotoHeight, 120)
        XCTAssertNil(flow.layout.columns)
        let horizontal = try Fixtures.pages("horizontal")[0]
        XCTAssertEqual(horizontal.layout.axis, .horizontal)
        XCTAssertFalse(horizontal.layout.scrollsVertically)
        let sections = try Fixtures.pages("sections")
        let events = sections.flatMap { $0.sections ?? [] }
        XCTAssertEqual(events.filter { $0.event == .start }.map(\.key), ["Spring", "Summer", "Autumn", "Winter"])
        XCTAssertEqual(events.filter { $0.event == .end }.count, 4)
        XCTAssertEqual(sections[0].items[0].section, 0)
        let warnings = waterfall.flatMap(\.items).flatMap(\.warnings).map(\.code)
        XCTAssertTrue(warnings.contains("imageNotFound"), "\(warnings)")
    }

    func testAPageOfAnotherMajorVersionIsRefused() throws {
        var text = try String(contentsOf: Fixtures.pageFiles("flow")[0], encoding: .utf8)
        text = text.replacingOccurrences(of: #""schema":"feedlayout.page/1""#, with: #""schema":"feedlayout.page/2""#)
        XCTAssertThrowsError(try Page(json: Data(text.utf8))) { error in
            XCTAssertEqual(error as? UnsupportedPageSchema, UnsupportedPageSchema(found: "feedlayout.page/2"))
            XCTAssertTrue("\(error)".contains("the page is feedlayout.page/2"), "\(error)")
            XCTAssertTrue("\(error)".contains("reads feedlayout.page/1"), "\(error)")
        }
        XCTAssertThrowsError(try Page(json: Data(#"{"schema":"something/1"}"#.utf8))) { error in
            XCTAssertEqual(error as? UnsupportedPageSchema, UnsupportedPageSchema(found: "something/1"))
        }
    }

    func testUnknownMembersAreToleratedAndAPhotosAreKept() throws {
        var object = try JSONSerialization.jsonObject(with: Data(contentsOf: Fixtures.pageFiles("waterfall/375")[0]))
            as! [String: Any]
        object["futureMember"] = ["a": 1]
        var layout = object["layout"] as! [String: Any]
        layout["futureGridMember"] = true
        object["layout"] = layout
        var items = object["items"] as! [[String: Any]]
        items[0]["futureItemMember"] = "x"
        var photo = items[0]["photo"] as! [String: Any]
        photo["focalPoint"] = ["x": 0.5, "y": 0.25]
        photo["alt"] = "A red cup"
        items[0]["photo"] = photo
        object["items"] = items
        let page = try Page(json: JSONSerialization.data(withJSONObject: object))
        XCTAssertEqual(page.items[0].photo.alt, "A red cup")
        XCTAssertEqual(
            page.items[0].photo.otherMembers, ["focalPoint": .object(["x": .number(0.5), "y": .number(0.25)])])
        let again = try jsonValue(JSONEncoder().encode(page))
        guard case .object(let top) = again, case .array(let encodedItems) = top["items"],
            case .object(let item) = encodedItems[0], case .object(let encodedPhoto) = item["photo"]
        else { return XCTFail("not a page: \(again)") }
        XCTAssertNil(top["futureMember"])
        XCTAssertNil(item["futureItemMember"])
        XCTAssertEqual(encodedPhoto["focalPoint"], .object(["x": .number(0.5), "y": .number(0.25)]))
        XCTAssertEqual(encodedPhoto["alt"], .string("A red cup"))
    }

    func testUnknownDescriptiveValuesAreKeptAndStructuralOnesRefused() throws {
        let original = try String(contentsOf: Fixtures.pageFiles("waterfall/375")[0], encoding: .utf8)
        let spiral = original.replacingOccurrences(of: #""placement":"shortestFirst""#, with: #""placement":"spiral""#)
            .replacingOccurrences(of: #""sizeFrom":"header""#, with: #""sizeFrom":"camera""#)
        let page = try Page(json: Data(spiral.utf8))
        XCTAssertEqual(page.layout.placement, .other("spiral"))
        XCTAssertFalse(page.layout.placement!.isKnown)
        XCTAssertTrue(page.items.contains { $0.photo.sizeFrom == .other("camera") })
        try assertRoundTrip(Data(spiral.utf8), "spiral placement")

        let diagonal = original.replacingOccurrences(of: #""layout":{"#, with: #""layout":{"axis":"diagonal","#)
        XCTAssertThrowsError(try Page(json: Data(diagonal.utf8))) { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(context.codingPath.map(\.stringValue), ["layout", "axis"])
        }
        let flow = try String(contentsOf: Fixtures.pageFiles("flow")[0], encoding: .utf8)
            .replacingOccurrences(of: #""mode":"flow""#, with: #""mode":"grid""#)
        XCTAssertThrowsError(try Page(json: Data(flow.utf8))) { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(context.codingPath.map(\.stringValue), ["layout", "mode"])
        }
    }

    func testARequiredMemberMustBeThereEvenWhenItMayBeNull() throws {
        let original = try String(contentsOf: Fixtures.pageFiles("waterfall/375")[2], encoding: .utf8)
        XCTAssertTrue(original.contains(#""cursor":null"#))
        let withoutCursor = original.replacingOccurrences(of: #","cursor":null"#, with: "")
        XCTAssertThrowsError(try Page(json: Data(withoutCursor.utf8))) { error in
            guard case DecodingError.keyNotFound(let key, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(key.stringValue, "cursor")
        }
        let withoutColumns = original.replacingOccurrences(of: #""columns":2,"#, with: "")
        XCTAssertThrowsError(try Page(json: Data(withoutColumns.utf8))) { error in
            guard case DecodingError.keyNotFound(let key, let context) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(context.codingPath.map(\.stringValue) + [key.stringValue], ["layout", "columns"])
        }
    }

    func testTheLayoutStatusDecodesAndEncodesToTheSameJSON() throws {
        let running = #"""
            {"id":"3981ab832b3c03dc342cd10652e88dd9","status":"running","items":20,"pages":2,"warnings":{"imageNotFound":1},\#
            "layouts":[{"index":0,"width":375,"columns":2,"pages":1,"contentHeight":2511.5},\#
            {"index":1,"width":1280,"columns":5,"pages":1,"contentHeight":1300}],\#
            "links":{"self":"/v1/layouts/3981ab832b3c03dc342cd10652e88dd9","pages":"/v1/layouts/3981ab832b3c03dc342cd10652e88dd9/pages/0"}}
            """#
        let failed = #"""
            {"id":"00000000000000000000000000000000","status":"failed","items":0,"pages":0,"warnings":{},\#
            "error":{"code":"notAFeed","message":"the document is not a feed"},\#
            "layouts":[{"index":0,"width":1024,"columns":4,"pages":0,"contentHeight":0}],\#
            "links":{"self":"/v1/layouts/00000000000000000000000000000000","pages":"/v1/layouts/00000000000000000000000000000000/pages/0"}}
            """#
        for text in [running, failed] {
            let status = try JSONDecoder().decode(LayoutStatus.self, from: Data(text.utf8))
            let again = try JSONEncoder().encode(status)
            XCTAssertNil(firstDifference(try jsonValue(Data(text.utf8)), try jsonValue(again)))
        }
        let status = try JSONDecoder().decode(LayoutStatus.self, from: Data(running.utf8))
        XCTAssertEqual(status.status, .running)
        XCTAssertEqual(status.links.layout, "/v1/layouts/3981ab832b3c03dc342cd10652e88dd9")
        XCTAssertEqual(status.layouts[0].contentHeight, 2511.5)
        XCTAssertEqual(try JSONDecoder().decode(LayoutStatus.self, from: Data(failed.utf8)).error?.code, "notAFeed")
    }

    func testBreakpointChoiceIsTheWidestThatFitsElseTheNarrowest() {
        let layouts = [(375.0, 2), (768, 3), (1280, 5)].enumerated().map { index, breakpoint in
            LayoutSummary(index: index, width: breakpoint.0, columns: breakpoint.1, pages: 1, contentHeight: 100)
        }
        XCTAssertEqual(Breakpoints.choose(layouts, forWidth: 320)?.index, 0)
        XCTAssertEqual(Breakpoints.choose(layouts, forWidth: 375)?.index, 0)
        XCTAssertEqual(Breakpoints.choose(layouts, forWidth: 767.5)?.index, 0)
        XCTAssertEqual(Breakpoints.choose(layouts, forWidth: 768)?.index, 1)
        XCTAssertEqual(Breakpoints.choose(layouts, forWidth: 1279)?.index, 1)
        XCTAssertEqual(Breakpoints.choose(layouts, forWidth: 1280)?.index, 2)
        XCTAssertEqual(Breakpoints.choose(layouts, forWidth: 4000)?.index, 2)
        // The order of the list does not matter.
        XCTAssertEqual(Breakpoints.choose(layouts.reversed(), forWidth: 800)?.index, 1)
        XCTAssertEqual(Breakpoints.choose(layouts.reversed(), forWidth: 10)?.index, 0)
        XCTAssertNil(Breakpoints.choose([], forWidth: 800))
    }
}
