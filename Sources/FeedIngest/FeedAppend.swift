import ByteTools
import Foundation

/// Whether a feed is another one with items added after its last item and nothing else changed: the test a new
/// version of a subscription passes to take its predecessor's pages (issue 37, "appended items").
///
/// The test is on bytes, not on parsed items: `new` must be `old` cut right after the end of its last item, then
/// one or more whole items (with only whitespace around them; JSON: `,` between entries), then the rest of `old`
/// byte for byte. So every byte before the cut (the channel's head, every old item, their line and column numbers
/// and byte offsets, which warnings quote) and every byte after the items (channel elements that follow them, the
/// closing tags or brackets) is the same in both; the reader, which reads a feed in order, gives the old items the
/// same records in both, and they are followed by more items. Anything else (an item edited, removed or moved, a
/// channel element changed, an item inserted elsewhere, a comment among the new items, an XML feed whose DOCTYPE
/// declares entities, markup the scan cannot follow) answers `false`, and the caller lays the feed out from
/// scratch: a false `false` costs time, never bytes.
///
/// Cost: one markup scan of `old` (``XMLMarkupScanner`` or a bracket scan for JSON, no parsing), two `memcmp`s and
/// a scan of the new items' bytes. Or, for an XML feed whose ``Shape`` and digest are known, without `old` at all
/// (``match(shape:digest:new:)``): one SHA-256 pass over `new` and a scan of the new items' bytes.
public enum FeedAppend {
    /// What testing an append needs to know of an XML feed besides its digest: its length, where its last item
    /// ends and where each item begins.
    public struct Shape: Sendable, Equatable {
        /// The feed's length in bytes.
        public var length: Int
        /// Just past its last item: where items appended to it begin.
        public var itemsEnd: Int
        /// How many items it holds.
        public var itemCount: Int
        /// Where each item begins, when only whitespace lies among them (see ``Match/oldItemStarts``).
        public var itemStarts: [Int]?
        /// The line feeds before ``itemsEnd``: a run resumed near there numbers its lines without counting them
        /// over the whole feed again (``FeedByteSplitter/resumedFeed(_:atItemStart:knownLines:)``).
        public var linesBeforeItemsEnd: Int
    }

    /// The shape of an XML feed whose items the scan follows to their parent's end tag, with at least one item;
    /// `nil` for any other (a JSON Feed, entities declared, markup the scan cannot follow).
    public static func shape(of feed: [UInt8]) -> Shape? { feed.withUnsafeBytes { shape(of: $0) } }

    private static func shape(of bytes: UnsafeRawBufferPointer) -> Shape? {
        xmlItemsEnd(bytes).map {
            Shape(
                length: bytes.count, itemsEnd: $0.end, itemCount: $0.count, itemStarts: $0.starts,
                linesBeforeItemsEnd: XMLMarkupScanner.newlines(in: 0..<$0.end, of: bytes))
        }
    }

    /// Whether `new` is the feed `shape` describes, whose SHA-256 is `digest`, with items appended, tested without
    /// that feed: `new` without the bytes it would have inserted after the old last item must have that digest,
    /// and those bytes must be whole items with only whitespace around them.
    /// - Returns: The match (`nil` when `new` is not such an append) and `new`'s digest, both from one pass.
    public static func match(shape: Shape, digest: String, new: [UInt8]) -> (match: Match?, digest: String) {
        let digests = ArrivingDigests(shape: shape)
        new.withUnsafeBytes { digests.append($0) }
        let computed = digests.finish(feed: new)
        return (match(shape: shape, digest: digest, new: new, digests: computed), computed.whole)
    }

    /// ``match(shape:digest:new:)`` with `new`'s digests computed as it arrived (``ArrivingDigests``).
    public static func match(shape: Shape, digest: String, new: [UInt8], digests: ArrivingDigests.Digests) -> Match? {
        guard digests.omitting == digest else { return nil }
        return new.withUnsafeBytes { appended(to: shape, in: $0) }
    }

    /// A feed's digest, and the one ``match(shape:digest:new:)`` tests it with, computed from its bytes in order as
    /// they arrive, so that the pass over a large feed runs while it is being received instead of after. The bytes
    /// before the held shape's items end are the same in both; the hasher is copied there, and the copy gets the
    /// feed's last bytes (the old feed's after that point) once the feed's length is known.
    /// One task at a time uses one (it is handed from task to task, never shared).
    public final class ArrivingDigests: @unchecked Sendable {
        public struct Digests: Sendable {
            /// The SHA-256 of the whole feed, as 64 lower-case hex digits.
            public var whole: String
            /// The SHA-256 of the feed without what it would have inserted after the shape's items; `nil` without a
            /// shape, or when the feed is no longer than the shape's.
            public var omitting: String?
        }

        private let shape: Shape?
        private let whole = SHA256.Hasher()
        private var beforeInsertion: SHA256.Hasher?
        private var received = 0

        /// - Parameter shape: The shape of the version the feed may extend, when it is held.
        public init(shape: Shape?) {
            self.shape = shape
            if shape?.itemsEnd == 0 { beforeInsertion = whole.copy() }
        }

        /// The feed's next bytes.
        public func append(_ bytes: UnsafeRawBufferPointer) {
            if let mark = shape?.itemsEnd, beforeInsertion == nil, received + bytes.count >= mark {
                let head = mark - received
                whole.update(UnsafeRawBufferPointer(rebasing: bytes[..<head]))
                beforeInsertion = whole.copy()
                whole.update(UnsafeRawBufferPointer(rebasing: bytes[head...]))
            } else {
                whole.update(bytes)
            }
            received += bytes.count
        }

        /// The digests, once every byte of `feed` was appended (checked: a count that differs is a caller's bug).
        public func finish(feed: [UInt8]) -> Digests {
            precondition(received == feed.count, "ArrivingDigests: \(received) bytes appended, the feed has \(feed.count)")
            var omitting: String?
            if let shape, let beforeInsertion, feed.count > shape.length, shape.itemsEnd <= shape.length {
                feed.withUnsafeBytes { bytes in
                    beforeInsertion.update(UnsafeRawBufferPointer(rebasing: bytes[(feed.count - (shape.length - shape.itemsEnd))...]))
                }
                omitting = beforeInsertion.hexDigest()
            }
            return Digests(whole: whole.hexDigest(), omitting: omitting)
        }
    }

    /// The match of an XML feed `new` whose bytes around the ones inserted after `shape`'s last item are known to be
    /// that feed's, when the inserted bytes are whole items with only whitespace around them.
    private static func appended(to shape: Shape, in new: UnsafeRawBufferPointer) -> Match? {
        let inserted = shape.itemsEnd..<(shape.itemsEnd + new.count - shape.length)
        guard let appended = xmlItems(new, from: inserted.lowerBound, to: inserted.upperBound) else { return nil }
        return Match(
            cut: shape.itemsEnd, appendedItems: appended.starts.count, oldItemStarts: shape.itemStarts,
            firstAppendedStart: appended.starts.first, linesBeforeCut: shape.linesBeforeItemsEnd,
            newShape: Shape(
                length: new.count, itemsEnd: appended.end, itemCount: shape.itemCount + appended.starts.count,
                itemStarts: shape.itemStarts.map { $0 + appended.starts },
                linesBeforeItemsEnd: shape.linesBeforeItemsEnd
                    + XMLMarkupScanner.newlines(in: shape.itemsEnd..<appended.end, of: new)))
    }

    /// How a new feed extends an old one.
    public struct Match: Sendable, Equatable {
        /// Where the appended bytes begin, in both feeds: just past the old feed's last item.
        public var cut: Int
        /// How many whole items were appended.
        public var appendedItems: Int
        /// Where each of the old feed's items begins (its start tag's `<`), when the old feed is XML and only
        /// whitespace lies among its items: the places a run of the new feed may resume from by bytes
        /// (``FeedByteSplitter/resumedFeed(_:atItemStart:knownLines:)``). `nil` for a JSON Feed, or when anything else (a
        /// comment, a channel element, text) lies among the items.
        public var oldItemStarts: [Int]?
        /// Where the first appended item begins in the new feed (XML; `nil` for a JSON Feed).
        public var firstAppendedStart: Int?
        /// The line feeds before ``cut``, the same in both feeds (XML; `nil` for a JSON Feed).
        public var linesBeforeCut: Int?

        /// ``linesBeforeCut`` as ``FeedByteSplitter/resumedFeed(_:atItemStart:knownLines:)`` takes it.
        public var knownLines: (offset: Int, newlines: Int)? { linesBeforeCut.map { (cut, $0) } }
        /// The new feed's shape (XML; `nil` for a JSON Feed): what its own successor is tested with.
        public var newShape: Shape?
    }

    /// - Returns: Whether `new` is `old` with at least one whole item appended after its last one.
    public static func isAppend(old: [UInt8], new: [UInt8]) -> Bool { match(old: old, new: new) != nil }

    /// - Returns: How `new` extends `old` when it is `old` with at least one whole item appended after its last
    ///   one (see the type's comment), else `nil`.
    public static func match(old: [UInt8], new: [UInt8]) -> Match? {
        guard new.count > old.count else { return nil }
        let oldBytes = old
        return old.withUnsafeBytes { old -> Match? in
            new.withUnsafeBytes { new -> Match? in
                guard let first = firstSignificantByte(old) else { return nil }
                let cut: Int?
                var shape: Shape?
                switch old[first] {
                case UInt8(ascii: "<"):
                    shape = Self.shape(of: old)
                    cut = shape?.itemsEnd
                case UInt8(ascii: "{"): cut = JSONItems.end(oldBytes, from: first)
                default: cut = nil
                }
                guard let cut, cut > 0 else { return nil }
                let tail = old.count - cut
                let limit = new.count - tail
                guard memcmp(old.baseAddress!, new.baseAddress!, cut) == 0,
                    tail == 0 || memcmp(old.baseAddress! + cut, new.baseAddress! + limit, tail) == 0
                else { return nil }
                if let shape { return appended(to: shape, in: new) }
                guard let count = JSONItems.entries(new, from: cut, to: limit) else { return nil }
                return Match(
                    cut: cut, appendedItems: count, oldItemStarts: nil, firstAppendedStart: nil, linesBeforeCut: nil,
                    newShape: nil)
            }
        }
    }

    /// The first byte after a UTF-8 byte order mark and whitespace.
    private static func firstSignificantByte(_ bytes: UnsafeRawBufferPointer) -> Int? {
        var index = 0
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
        while index < bytes.count, isWhitespace(bytes[index]) { index += 1 }
        return index < bytes.count ? index : nil
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private static func isWhitespace(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Bool {
        range.allSatisfy { isWhitespace(bytes[$0]) }
    }

    // MARK: XML (RSS, RDF, Atom)

    /// Where an XML feed's last item ends (just past its end tag), when the scan follows every item to the end of
    /// their parent; with where each item begins when only whitespace lies among them.
    private static func xmlItemsEnd(_ bytes: UnsafeRawBufferPointer) -> (end: Int, count: Int, starts: [Int]?)? {
        guard let head = try? Head(bytes, path: "the feed"), head.isRegular, !head.declaresEntities,
            let first = head.firstItem
        else { return nil }
        var lastWasItem = false
        var end: Int?
        var starts: [Int]? = []
        var count = 0
        var resumed = first
        do {
            let closed = try FeedByteSplitter.walkItems(in: bytes, head: head, from: first) { offset, isItem in
                lastWasItem = isItem
                if isItem { count += 1 }
                if isItem, isWhitespace(bytes, resumed..<offset) {
                    starts?.append(offset)
                } else {
                    starts = nil
                }
                return true
            } passed: { offset in
                resumed = offset
                if lastWasItem { end = offset }
            }
            // The walk must reach the items' parent's end tag: a feed cut short is no base for a cut.
            guard closed != nil else { return nil }
        } catch {
            return nil
        }
        return end.map { ($0, count, starts) }
    }

    /// The items `bytes[start..<end]` holds when it holds only whole items of the feed (named as its first item
    /// is), at least one, with only whitespace around them: where each begins, and where the last ends.
    private static func xmlItems(
        _ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int
    ) -> (starts: [Int], end: Int)? {
        guard let head = try? Head(bytes, path: "the feed"), head.isRegular, !head.declaresEntities else { return nil }
        var starts: [Int] = []
        var resumed = start
        var fits = true
        do {
            _ = try FeedByteSplitter.walkItems(in: bytes, head: head, from: start) { offset, isItem in
                guard offset < end else { return false }
                guard isItem, isWhitespace(bytes, resumed..<offset) else {
                    fits = false
                    return false
                }
                starts.append(offset)
                return true
            } passed: { offset in
                resumed = offset
            }
        } catch {
            return nil
        }
        guard fits, !starts.isEmpty, resumed <= end, isWhitespace(bytes, resumed..<end) else { return nil }
        return (starts, resumed)
    }
}

/// The entries of a JSON Feed's `items` array, found by brackets and strings only (as ``JSONFeedSplitter`` finds
/// them; the reader parses each one).
private enum JSONItems {
    /// Where the last entry of the root object's first `items` member ends, when that member is an array with at
    /// least one entry.
    static func end(_ text: [UInt8], from start: Int) -> Int? {
        var position = start + 1
        var first = true
        while true {
            skipWhitespace(text, &position)
            guard position < text.count else { return nil }
            if first && text[position] == UInt8(ascii: "}") { return nil }
            first = false
            guard text[position] == UInt8(ascii: "\"") else { return nil }
            let nameStart = position
            guard skipValue(text, &position) else { return nil }
            let name = text[nameStart..<position]
            // A name written with escapes might be `items` too: no cut is made in such a feed.
            if name.contains(UInt8(ascii: "\\")) { return nil }
            skipWhitespace(text, &position)
            guard position < text.count, text[position] == UInt8(ascii: ":") else { return nil }
            position += 1
            skipWhitespace(text, &position)
            guard position < text.count else { return nil }
            if name.elementsEqual(#""items""#.utf8) {
                // The reader takes the first `items` member; an array is the only one with entries to append to.
                guard text[position] == UInt8(ascii: "[") else { return nil }
                return lastEntryEnd(text, from: position + 1)
            }
            guard skipValue(text, &position) else { return nil }
            skipWhitespace(text, &position)
            guard position < text.count, text[position] == UInt8(ascii: ",") else { return nil }
            position += 1
        }
    }

    /// Where the last entry of an array ends; `position` is just past its `[`.
    private static func lastEntryEnd(_ text: [UInt8], from start: Int) -> Int? {
        var position = start
        var end: Int?
        while true {
            skipWhitespace(text, &position)
            guard position < text.count else { return nil }
            if end == nil && text[position] == UInt8(ascii: "]") { return nil }
            guard skipValue(text, &position) else { return nil }
            end = position
            skipWhitespace(text, &position)
            guard position < text.count else { return nil }
            if text[position] == UInt8(ascii: "]") { return end }
            guard text[position] == UInt8(ascii: ",") else { return nil }
            position += 1
        }
    }

    /// How many entries `bytes[start..<end]` holds when it is `,` and an entry, once or more, with only whitespace
    /// around them; else `nil`.
    static func entries(_ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int) -> Int? {
        let text = Array(bytes[start..<end])
        var position = 0
        var entries = 0
        while true {
            skipWhitespace(text, &position)
            if position == text.count { return entries > 0 ? entries : nil }
            guard text[position] == UInt8(ascii: ",") else { return nil }
            position += 1
            skipWhitespace(text, &position)
            guard position < text.count, text[position] != UInt8(ascii: "]"), text[position] != UInt8(ascii: ",")
            else { return nil }
            guard skipValue(text, &position, isFinal: true) else { return nil }
            entries += 1
        }
    }

    private static func skipWhitespace(_ text: [UInt8], _ position: inout Int) {
        while position < text.count, JSONValue.isWhitespace(text[position]) { position += 1 }
    }

    /// Moves past one value; `false` when the text ends inside it.
    private static func skipValue(_ text: [UInt8], _ position: inout Int, isFinal: Bool = false) -> Bool {
        var scanner = ValueEndScanner()
        return scanner.scan(text, from: &position, isFinal: isFinal)
    }
}
