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
/// a scan of the new items' bytes.
public enum FeedAppend {
    /// - Returns: Whether `new` is `old` with at least one whole item appended after its last one.
    public static func isAppend(old: [UInt8], new: [UInt8]) -> Bool {
        guard new.count > old.count else { return false }
        let oldBytes = old
        return old.withUnsafeBytes { old in
            new.withUnsafeBytes { new in
                guard let first = firstSignificantByte(old) else { return false }
                let cut: Int?
                switch old[first] {
                case UInt8(ascii: "<"): cut = xmlItemsEnd(old)
                case UInt8(ascii: "{"): cut = JSONItems.end(oldBytes, from: first)
                default: cut = nil
                }
                guard let cut, cut > 0 else { return false }
                let tail = old.count - cut
                let limit = new.count - tail
                guard memcmp(old.baseAddress!, new.baseAddress!, cut) == 0,
                    tail == 0 || memcmp(old.baseAddress! + cut, new.baseAddress! + limit, tail) == 0
                else { return false }
                return old[first] == UInt8(ascii: "<")
                    ? xmlIsItemsOnly(new, from: cut, to: limit) : JSONItems.isEntriesOnly(new, from: cut, to: limit)
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
    /// their parent.
    private static func xmlItemsEnd(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard let head = try? Head(bytes, path: "the feed"), head.isRegular, !head.declaresEntities,
            let first = head.firstItem
        else { return nil }
        var lastWasItem = false
        var end: Int?
        do {
            let closed = try FeedByteSplitter.walkItems(in: bytes, head: head, from: first) { _, isItem in
                lastWasItem = isItem
                return true
            } passed: { offset in
                if lastWasItem { end = offset }
            }
            // The walk must reach the items' parent's end tag: a feed cut short is no base for a cut.
            guard closed != nil else { return nil }
        } catch {
            return nil
        }
        return end
    }

    /// Whether `bytes[start..<end]` holds whole items of the feed (named as its first item is), at least one, with
    /// only whitespace around them.
    private static func xmlIsItemsOnly(_ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int) -> Bool {
        guard let head = try? Head(bytes, path: "the feed"), head.isRegular, !head.declaresEntities else { return false }
        var items = 0
        var resumed = start
        var fits = true
        do {
            _ = try FeedByteSplitter.walkItems(in: bytes, head: head, from: start) { offset, isItem in
                guard offset < end else { return false }
                guard isItem, isWhitespace(bytes, resumed..<offset) else {
                    fits = false
                    return false
                }
                items += 1
                return true
            } passed: { offset in
                resumed = offset
            }
        } catch {
            return false
        }
        return fits && items > 0 && resumed <= end && isWhitespace(bytes, resumed..<end)
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

    /// Whether `bytes[start..<end]` is `,` and an entry, once or more, with only whitespace around them.
    static func isEntriesOnly(_ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int) -> Bool {
        let text = Array(bytes[start..<end])
        var position = 0
        var entries = 0
        while true {
            skipWhitespace(text, &position)
            if position == text.count { return entries > 0 }
            guard text[position] == UInt8(ascii: ",") else { return false }
            position += 1
            skipWhitespace(text, &position)
            guard position < text.count, text[position] != UInt8(ascii: "]"), text[position] != UInt8(ascii: ",")
            else { return false }
            guard skipValue(text, &position, isFinal: true) else { return false }
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
