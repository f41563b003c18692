import FeedIngest
import Foundation
import Testing

/// ``FeedAppend``: a feed is another with whole items added after its last item, every other byte the same.
struct FeedAppendTests {
    static func rss(_ items: [String], channel: String = "<title>t</title>", after: String = "") -> [UInt8] {
        var text = "<?xml version=\"1.0\"?>\n<rss version=\"2.0\"><channel>\(channel)\n"
        for item in items { text += "<item><guid>\(item)</guid><title>\(item) &amp; more</title></item>\n" }
        return Array((text + after + "</channel></rss>\n").utf8)
    }

    static func atom(_ entries: [String]) -> [UInt8] {
        var text = "<feed xmlns=\"http://www.w3.org/2005/Atom\"><title>t</title>\n"
        for entry in entries { text += "  <entry><id>\(entry)</id><title type=\"html\">&lt;b&gt;\(entry)</title></entry>\n" }
        return Array((text + "</feed>").utf8)
    }

    static func json(_ items: [String], after: String = "") -> [UInt8] {
        let entries = items.map { #"{"id": "\#($0)", "title": "a ] } \" [ {", "tags": ["x", 1]}"# }
        return Array(
            (#"{"version": "https://jsonfeed.org/version/1.1", "title": "t", "items": ["#
                + entries.joined(separator: ",\n  ") + "]" + after + "}\n").utf8)
    }

    @Test func itemsAppendedAfterTheLastAreAnAppend() {
        #expect(FeedAppend.isAppend(old: Self.rss(["a", "b"]), new: Self.rss(["a", "b", "c"])))
        #expect(FeedAppend.isAppend(old: Self.rss(["a", "b"]), new: Self.rss(["a", "b", "c", "d", "e"])))
        #expect(FeedAppend.isAppend(old: Self.atom(["a"]), new: Self.atom(["a", "b"])))
        #expect(FeedAppend.isAppend(old: Self.json(["a", "b"]), new: Self.json(["a", "b", "c"])))
        #expect(FeedAppend.isAppend(old: Self.json(["a"], after: #", "x": [1]"#), new: Self.json(["a", "b"], after: #", "x": [1]"#)))
        // Channel elements after the items stay where they are.
        #expect(
            FeedAppend.isAppend(
                old: Self.rss(["a"], after: "<image><url>u</url></image>\n"),
                new: Self.rss(["a", "b"], after: "<image><url>u</url></image>\n")))
    }

    @Test func anyOtherChangeIsNot() {
        let old = Self.rss(["a", "b", "c"])
        #expect(!FeedAppend.isAppend(old: old, new: old))
        #expect(!FeedAppend.isAppend(old: old, new: Self.rss(["a", "B", "c", "d"])), "edited")
        #expect(!FeedAppend.isAppend(old: old, new: Self.rss(["a", "c", "d", "e"])), "removed")
        #expect(!FeedAppend.isAppend(old: old, new: Self.rss(["b", "a", "c", "d"])), "reordered")
        #expect(!FeedAppend.isAppend(old: old, new: Self.rss(["d", "a", "b", "c"])), "added at the top")
        #expect(!FeedAppend.isAppend(old: old, new: Self.rss(["a", "b", "c", "d"], channel: "<title>u</title>")), "channel")
        #expect(
            !FeedAppend.isAppend(old: old, new: Self.rss(["a", "b", "c", "d"], after: "<ttl>5</ttl>\n")),
            "a channel element after the items")
        #expect(!FeedAppend.isAppend(old: Self.rss([]), new: Self.rss(["a"])), "no item to append to")
        // Something besides items among the new ones.
        var commented = old
        commented.insert(contentsOf: Array("<!-- x --><item><guid>d</guid></item>".utf8), at: Self.endOfLastItem(old))
        #expect(!FeedAppend.isAppend(old: old, new: commented))
        var texted = old
        texted.insert(contentsOf: Array("text<item><guid>d</guid></item>".utf8), at: Self.endOfLastItem(old))
        #expect(!FeedAppend.isAppend(old: old, new: texted))
        var unclosed = old
        unclosed.insert(contentsOf: Array("<item><guid>d</guid>".utf8), at: Self.endOfLastItem(old))
        #expect(!FeedAppend.isAppend(old: old, new: unclosed))
        var pure = old
        pure.insert(contentsOf: Array("<item><guid>d</guid></item>".utf8), at: Self.endOfLastItem(old))
        #expect(FeedAppend.isAppend(old: old, new: pure))

        let json = Self.json(["a", "b"])
        #expect(!FeedAppend.isAppend(old: json, new: Self.json(["a", "c", "d"])))
        #expect(!FeedAppend.isAppend(old: json, new: Self.json(["a", "b", "c"], after: #", "x": 1"#)))
        #expect(!FeedAppend.isAppend(old: Self.json(["a"]), new: Array(String(decoding: Self.json(["a"]), as: UTF8.self).replacingOccurrences(of: "]}", with: ", 7, ]}").utf8)))
        // XML against JSON, and a feed that is neither.
        #expect(!FeedAppend.isAppend(old: Array("hello".utf8), new: Array("hello world".utf8)))
        // Entities declared in a DOCTYPE may hold markup: no cut is trusted.
        let declared = Array("<!DOCTYPE rss [<!ENTITY e \"x\">]>".utf8)
        #expect(!FeedAppend.isAppend(old: declared + old, new: declared + Self.rss(["a", "b", "c", "d"])))
    }

    /// Just past the last `</item>`.
    static func endOfLastItem(_ feed: [UInt8]) -> Int {
        let tag = Array("</item>".utf8)
        var index = feed.count - tag.count
        while index >= 0 && Array(feed[index..<(index + tag.count)]) != tag { index -= 1 }
        return index + tag.count
    }
}
