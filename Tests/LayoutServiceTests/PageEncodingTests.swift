import FeedLayout
import Foundation
import Testing

import LayoutStore

@testable import LayoutService

/// The pins' JSON is sliced out of the stored page: the slices must be exactly the page's items, whatever their
/// text holds.
@Suite struct PageEncodingTests {
    @Test func itemSlicesAreThePagesItemsEvenWithJSONInTheirText() async throws {
        let tricky = [
            #"a title with "items":[1,2] in it"#, "brackets ]]}} and {[ commas, ,", #"a backslash \ and "quotes""#,
            "emoji 📷 and 日本語", "",
        ]
        var feed = #"<?xml version="1.0"?><rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>t</title>"#
        for (index, text) in tricky.enumerated() {
            let escaped = text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            feed += "<item><guid>\(index)</guid><title>\(escaped)</title><description>\(escaped)</description>"
            feed += "<media:content url=\"https://photos.invalid/\(index).jpg\" width=\"400\" height=\"300\"/></item>"
        }
        feed += "</channel></rss>"
        var pages: [LayoutPage] = []
        _ = try await LayoutPipeline(options: LayoutOptions()).run(.bytes(Array(feed.utf8))) { pages.append($0) }
        let page = try #require(pages.first)
        let encoded = PageEncoding.write(for: page)
        #expect(encoded.gzip.isEmpty)
        let write = try #require(PageEncoding.compress([encoded]).first)
        let parsed = try JSONSerialization.jsonObject(with: Data(write.json)) as! [String: Any]
        let items = parsed["items"] as! [[String: Any]]
        #expect(write.pins.count == tricky.count)
        for (pin, item) in zip(write.pins, items) {
            let slice = Data(write.json[pin.jsonOffset..<(pin.jsonOffset + pin.jsonLength)])
            let sliced = try JSONSerialization.jsonObject(with: slice) as! [String: Any]
            #expect(NSDictionary(dictionary: sliced).isEqual(to: item), "pin \(pin.itemIndex)")
            #expect(sliced["index"] as? Int == pin.itemIndex)
        }
        #expect(Gzip.decompress(write.gzip) == write.json)
    }
}
