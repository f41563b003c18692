import ByteTools
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

    @Test func aMatchSaysWhereTheItemsBeginAndHowManyWereAppended() throws {
        let old = Self.rss(["a", "b", "c"])
        let new = Self.rss(["a", "b", "c", "d", "e"])
        let match = try #require(FeedAppend.match(old: old, new: new))
        #expect(match.cut == Self.endOfLastItem(old))
        #expect(match.appendedItems == 2)
        let starts = try #require(match.oldItemStarts)
        #expect(starts.map { Array(old[$0..<($0 + 13)]) } == ["a", "b", "c"].map { Array("<item><guid>\($0)".utf8) })
        let first = try #require(match.firstAppendedStart)
        #expect(Array(new[first..<(first + 13)]) == Array("<item><guid>d".utf8))
        // JSON: counted, with no places to resume by bytes.
        let json = try #require(FeedAppend.match(old: Self.json(["a"]), new: Self.json(["a", "b", "c"])))
        #expect(json.appendedItems == 2 && json.oldItemStarts == nil && json.firstAppendedStart == nil)
        // Anything among the old items but whitespace: an append, but no place to resume by bytes.
        for among in ["<!-- x -->", "<ttl>5</ttl>", "text"] {
            let text = String(decoding: old, as: UTF8.self)
            let marked = Array(text.replacingOccurrences(of: "</item>\n<item><guid>b", with: "</item>\(among)<item><guid>b").utf8)
            let extended = Array(
                String(decoding: new, as: UTF8.self)
                    .replacingOccurrences(of: "</item>\n<item><guid>b", with: "</item>\(among)<item><guid>b").utf8)
            let match = try #require(FeedAppend.match(old: marked, new: extended), "\(among)")
            #expect(match.appendedItems == 2 && match.oldItemStarts == nil, "\(among)")
        }
    }

    /// A feed's shape and digest test an append as the feed itself does, and give the new feed's shape.
    @Test func aShapeAndADigestTellAnAppendWithoutTheOldFeed() throws {
        let old = Self.rss(["a", "b", "c"])
        let shape = try #require(FeedAppend.shape(of: old))
        #expect(shape.length == old.count && shape.itemsEnd == Self.endOfLastItem(old) && shape.itemCount == 3)
        #expect(shape.itemStarts == FeedAppend.match(old: old, new: Self.rss(["a", "b", "c", "d"]))?.oldItemStarts)
        let digest = SHA256.hexDigest(old)
        var commented = old
        commented.insert(contentsOf: Array("<!-- x --><item><guid>d</guid></item>".utf8), at: Self.endOfLastItem(old))
        let candidates: [(String, [UInt8])] = [
            ("appended", Self.rss(["a", "b", "c", "d", "e"])), ("one appended", Self.rss(["a", "b", "c", "d"])),
            ("the same", old), ("edited", Self.rss(["a", "B", "c", "d"])), ("at the top", Self.rss(["d", "a", "b", "c"])),
            ("channel", Self.rss(["a", "b", "c", "d"], channel: "<title>u</title>")), ("a comment", commented),
            ("after the items", Self.rss(["a", "b", "c", "d"], after: "<ttl>5</ttl>\n")),
        ]
        for (name, new) in candidates {
            let byShape = FeedAppend.match(shape: shape, digest: digest, new: new)
            #expect(byShape.digest == SHA256.hexDigest(new), "\(name)")
            #expect(byShape.match == FeedAppend.match(old: old, new: new), "\(name)")
        }
        // The new feed's shape is the one a scan of it finds, so appends chain.
        let second = Self.rss(["a", "b", "c", "d", "e"])
        let match = try #require(FeedAppend.match(shape: shape, digest: digest, new: second).match)
        #expect(match.newShape == FeedAppend.shape(of: second))
        let third = Self.rss(["a", "b", "c", "d", "e", "f"])
        let secondShape = try #require(match.newShape)
        let next = try #require(FeedAppend.match(shape: secondShape, digest: SHA256.hexDigest(second), new: third).match)
        #expect(next.appendedItems == 1 && next.newShape == FeedAppend.shape(of: third))
        // A wrong digest (another feed of the same shape) is no append.
        #expect(FeedAppend.match(shape: shape, digest: SHA256.hexDigest(Self.rss(["x", "y", "z"])), new: second).match == nil)
        #expect(FeedAppend.shape(of: Self.json(["a"])) == nil)
    }

    /// Digests computed from a feed's chunks as they arrive, cut anywhere (a byte at a time, at the shape's items
    /// end, across it, one chunk), are the ones computed from the whole feed, and test an append the same way.
    @Test func digestsComputedAsTheFeedArrivesAreTheWholeFeedsOnes() throws {
        let old = Self.rss(["a", "b", "c"])
        let shape = try #require(FeedAppend.shape(of: old))
        let digest = SHA256.hexDigest(old)
        let candidates = [
            Self.rss(["a", "b", "c", "d", "e"]), Self.rss(["a", "B", "c", "d"]), old, Self.rss(["a"]), [],
            Self.rss(["a", "b", "c", "d"], after: "<ttl>5</ttl>\n"),
        ]
        for new in candidates {
            let whole = FeedAppend.match(shape: shape, digest: digest, new: new)
            let cuts = [[], [new.count], Array(0...new.count), [shape.itemsEnd], [shape.itemsEnd - 1, shape.itemsEnd + 1], [7, 300]]
            for shapeHeld in [true, false] {
                for cut in cuts.map({ $0.filter { $0 <= new.count } }) {
                    let digests = FeedAppend.ArrivingDigests(shape: shapeHeld ? shape : nil)
                    var start = 0
                    new.withUnsafeBytes { bytes in
                        for end in cut + [new.count] where end >= start {
                            digests.append(UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
                            start = end
                        }
                    }
                    let arrived = digests.finish(feed: new)
                    #expect(arrived.whole == SHA256.hexDigest(new))
                    let match = FeedAppend.match(shape: shape, digest: digest, new: new, digests: arrived)
                    #expect(match == (shapeHeld ? whole.match : nil), "\(new.count) bytes, cut at \(cut.count) places")
                    if new.count > shape.length, shapeHeld {
                        var omitted = new
                        omitted.removeSubrange(shape.itemsEnd..<(shape.itemsEnd + new.count - shape.length))
                        #expect(arrived.omitting == SHA256.hexDigest(omitted))
                    } else {
                        #expect(arrived.omitting == nil)
                    }
                }
            }
        }
    }

    @Test func aResumedFeedIsTheHeadAndTheRestFromAnItemsLine() throws {
        let feed = Self.rss(["a", "b", "c", "d"])
        let text = String(decoding: feed, as: UTF8.self)
        let starts = try #require(FeedAppend.match(old: Self.rss(["a", "b", "c"]), new: feed)?.oldItemStarts)
        let resumed = try #require(FeedByteSplitter.resumedFeed(feed, atItemStart: starts[2]))
        // The head (lines 1 and 2), blank lines for items a and b, then the rest from item c, on line 5 as before.
        let head = "<?xml version=\"1.0\"?>\n<rss version=\"2.0\"><channel><title>t</title>\n"
        #expect(String(decoding: resumed, as: UTF8.self) == head + "\n\n" + text[text.range(of: "<item><guid>c")!.lowerBound...])
        // With the lines before the match's cut known, counted from there (back to item c, or on to item d): the
        // same bytes, and a match's shapes carry the line counts a scan finds.
        let match = try #require(FeedAppend.match(old: Self.rss(["a", "b", "c"]), new: feed))
        #expect(match.linesBeforeCut == text.utf8.prefix(match.cut).filter { $0 == 0x0A }.count)
        #expect(match.newShape == FeedAppend.shape(of: feed))
        #expect(FeedByteSplitter.resumedFeed(feed, atItemStart: starts[2], knownLines: match.knownLines) == resumed)
        let fourth = try #require(match.firstAppendedStart)
        #expect(
            FeedByteSplitter.resumedFeed(feed, atItemStart: fourth, knownLines: match.knownLines)
                == FeedByteSplitter.resumedFeed(feed, atItemStart: fourth))
        func items(_ bytes: [UInt8]) throws -> [FeedItem] {
            let reader = FeedReader(sourceName: "f", baseURL: nil, feedDirectory: nil)
            return try bytes.withUnsafeBytes { try reader.consume($0) } + reader.finish()
        }
        let whole = try items(feed)
        let tail = try items(resumed)
        #expect(tail.map(\.id) == ["c", "d"])
        #expect(tail.map(\.title) == whole.suffix(2).map(\.title))
        // Not an item's start, the first item (nothing to skip), or an item that does not begin its line.
        #expect(FeedByteSplitter.resumedFeed(feed, atItemStart: starts[2] + 1) == nil)
        #expect(FeedByteSplitter.resumedFeed(feed, atItemStart: starts[0]) == nil)
        let secondOnItsLine = Array(text.replacingOccurrences(of: "</item>\n<item><guid>c", with: "</item><item><guid>c").utf8)
        let marker = Array("<item><guid>c".utf8)
        let index = try #require(
            secondOnItsLine.indices.first { Array(secondOnItsLine[$0..<min($0 + marker.count, secondOnItsLine.count)]) == marker })
        #expect(FeedByteSplitter.resumedFeed(secondOnItsLine, atItemStart: index) == nil)
    }

    /// Lines are counted sixteen bytes at a time: items of many lengths, blank runs and long lines, every item's line
    /// the same in the resumed feed as in the whole one.
    @Test func aResumedItemKeepsItsLine() throws {
        var generator = SystemRandomNumberGenerator()
        var text = "<?xml version=\"1.0\"?>\n<rss version=\"2.0\">\n<channel><title>t</title>\n"
        for index in 0..<400 {
            let lines = (0..<Int.random(in: 0...6, using: &generator)).map { _ in
                String(repeating: "w", count: Int.random(in: 0...300, using: &generator))
            }
            text += "<item><guid>\(index)</guid><description>\(lines.joined(separator: "\n"))</description></item>"
            text += String(repeating: "\n", count: Int.random(in: 1...3, using: &generator))
        }
        let feed = Array((text + "</channel></rss>\n").utf8)
        let starts = Self.itemStarts(feed)
        #expect(starts.count == 400)
        let itemsEnd = Self.endOfLastItem(feed)
        let known = (offset: itemsEnd, newlines: feed[..<itemsEnd].filter { $0 == 0x0A }.count)
        for index in [1, 2, 15, 16, 17, 199, 255, 256, 398, 399] {
            let start = starts[index]
            let resumed = try #require(FeedByteSplitter.resumedFeed(feed, atItemStart: start))
            let line = feed[..<start].filter { $0 == 0x0A }.count
            let resumedStart = resumed.count - (feed.count - start)
            #expect(resumed[..<resumedStart].filter { $0 == 0x0A }.count == line, "item \(index)")
            #expect(Array(resumed[resumedStart...]) == Array(feed[start...]), "item \(index)")
            // Counted back from the items' end when the lines before it are known: the same bytes.
            #expect(FeedByteSplitter.resumedFeed(feed, atItemStart: start, knownLines: known) == resumed, "item \(index)")
        }
    }

    /// Where each item of an RSS feed begins, from an append's match (the feed with one more item).
    static func itemStarts(_ feed: [UInt8]) -> [Int] {
        let cut = endOfLastItem(feed)
        var new = feed
        new.insert(contentsOf: Array("<item><guid>appended</guid></item>".utf8), at: cut)
        return FeedAppend.match(old: feed, new: new)?.oldItemStarts ?? []
    }

    /// Just past the last `</item>`.
    static func endOfLastItem(_ feed: [UInt8]) -> Int {
        let tag = Array("</item>".utf8)
        var index = feed.count - tag.count
        while index >= 0 && Array(feed[index..<(index + tag.count)]) != tag { index -= 1 }
        return index + tag.count
    }
}
