import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A share of a feed file for one worker: the items whose start tag begins in `bytes`, which are items `items`
/// of the feed (an open end, `Int.max`, when the scan could not count them exactly), the first on line
/// `firstLine`.
public struct FeedByteRange: Sendable, Equatable {
    public var bytes: Range<Int>
    public var items: Range<Int>
    public var firstLine: Int

    public init(bytes: Range<Int>, items: Range<Int>, firstLine: Int) {
        self.bytes = bytes
        self.items = items
        self.firstLine = firstLine
    }

    /// A range as the options write it: `START..END`, or `START..` for an open end.
    public static func text(_ range: Range<Int>) -> String {
        "\(range.lowerBound).." + (range.upperBound == Int.max ? "" : "\(range.upperBound)")
    }
}

/// Why a feed cannot be split by bytes, or a range does not fit it. `message` names the file and the place.
public struct FeedByteSplitError: Error, Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// The file cannot be opened or mapped.
        case unreadable
        /// The feed is not one the scan can follow (not XML, UTF-16, entities declared in its DOCTYPE, …).
        case notSplittable
        /// The range given does not begin or end where items do.
        case rangeMismatch
    }
    public var kind: Kind
    public var message: String
}

/// Splits a feed file by bytes, as Hadoop's XML record readers split files: a worker reads the document's head
/// (the XML declaration, DOCTYPE, root and channel start tags with their namespace declarations and `xml:base`)
/// and then only its own share of the items, so that many workers read one giant file in parallel.
///
/// Unlike a record reader, the ranges come from a first pass (``split(path:into:)``): one sequential scan of the
/// markup (``XMLMarkupScanner``: no parsing, no decoding) that cuts only before an item whose start tag begins a
/// line, where nothing can be inside a comment, a CDATA section or another item, and that knows each cut's item
/// index and line. A worker's document (``document(path:range:)``) is then the head, blank lines up to the
/// range's first line, its items verbatim, and the closing tags: the parser sees every item exactly as in the whole
/// file, with the same line and column numbers in its warnings, so the prepared items are the same.
///
/// Cuts stop at the first markup that is not well-formed (a mismatched end tag, an unclosed comment, an item
/// inside an item): what follows it goes to the last range whole, where the parser repairs it as it would in the
/// whole file.
public enum FeedByteSplitter {
    /// A worker's document: pieces of the file and bytes made up around them, in order.
    public struct Document: Sendable {
        public enum Piece: Sendable, Equatable {
            case file(Range<Int>)
            case bytes([UInt8])
        }
        public var pieces: [Piece]
        /// Items of the range found by the scan; `nil` when it could not count them exactly (the last range after
        /// markup that is not well-formed).
        public var itemCount: Int?
    }

    /// Cuts the feed into about `count` ranges of similar size, each beginning at an item.
    ///
    /// - Returns: Ranges covering the whole file in order: the first begins at byte 0 (the head is every range's
    ///   too), the last ends at the file's end. Fewer than `count` when the feed has fewer places to cut (items
    ///   that do not begin lines, a one-line feed, markup that is not well-formed early on).
    /// - Throws: ``FeedByteSplitError`` (`.unreadable`, `.notSplittable`) naming the file.
    public static func split(path: String, into count: Int) throws(FeedByteSplitError) -> [FeedByteRange] {
        let file = try MappedFile(path: path)
        let bytes = file.bytes
        let head = try Head(bytes, path: path)
        guard let first = head.firstItem, !head.declaresEntities else {
            // One range, the whole file. Its items are counted by the parser when entities may hold more of them.
            let counted = head.isRegular && !head.declaresEntities
            return [FeedByteRange(bytes: 0..<bytes.count, items: 0..<(counted ? 0 : Int.max), firstLine: 1)]
        }
        let target = max(1, count)
        let share = max(1, (bytes.count - first) / target)
        var cuts: [(offset: Int, index: Int, line: Int)] = []
        var index = 0
        var nextCut = first + share
        var line = 1
        var lineCounted = 0
        // Whether `index` counts every item: the scan reached the items' end without meeting markup it cannot follow.
        var counted = true
        do {
            _ = try walkItems(in: bytes, head: head, from: first) { start, isItem in
                guard isItem else { return true }
                if start >= nextCut, cuts.count < target - 1, let lineStart = Self.lineStart(before: start, in: bytes)
                {
                    line += XMLMarkupScanner.newlines(in: lineCounted..<lineStart, of: bytes)
                    lineCounted = lineStart
                    cuts.append((lineStart, index, line))
                    nextCut = lineStart + share
                }
                index += 1
                return true
            }
        } catch {
            // No cut after markup the scan cannot follow, and the last range's items are counted by the parser.
            counted = false
        }
        var ranges: [FeedByteRange] = []
        var previous = (offset: 0, index: 0, line: 1)
        for cut in cuts {
            ranges.append(FeedByteRange(bytes: previous.offset..<cut.offset, items: previous.index..<cut.index, firstLine: previous.line))
            previous = cut
        }
        ranges.append(
            FeedByteRange(
                bytes: previous.offset..<bytes.count, items: previous.index..<(counted ? index : Int.max),
                firstLine: previous.line))
        return ranges
    }

    /// The document a worker parses for the items whose start tag begins in `range.bytes`.
    ///
    /// - Parameter range: A range ``split(path:into:)`` made (its line and first index).
    /// - Returns: The pieces of the worker's document and how many items the scan found in it.
    /// - Throws: ``FeedByteSplitError``: `.rangeMismatch` when the range does not begin at byte 0 or at a line
    ///   that begins an item, or ends inside markup that is not well-formed (before the file's end).
    public static func document(path: String, range: FeedByteRange) throws(FeedByteSplitError) -> Document {
        let file = try MappedFile(path: path)
        let bytes = file.bytes
        let head = try Head(bytes, path: path)
        let end = min(range.bytes.upperBound, bytes.count)
        let wholeFile = range.bytes.lowerBound == 0 && range.bytes.upperBound >= bytes.count
        if head.declaresEntities {
            // Entities may hold markup, items too: only the whole file, and only the parser counts its items.
            guard wholeFile else {
                throw FeedByteSplitError(
                    kind: .notSplittable,
                    message: "\(path): the DOCTYPE declares entities, which may hold markup: only the whole feed can be read")
            }
            return Document(pieces: [.file(0..<bytes.count)], itemCount: nil)
        }
        guard let first = head.firstItem else {
            // No item the scan could reach: the whole file is one range, read as it is.
            guard wholeFile else {
                throw FeedByteSplitError(
                    kind: .rangeMismatch,
                    message: "\(path): the scan finds no item to begin or end a range at; take ranges from prepare --split")
            }
            return Document(pieces: [.file(0..<bytes.count)], itemCount: head.isRegular ? 0 : nil)
        }
        guard range.bytes.lowerBound < end else {
            // An empty range: the head alone, closed.
            return Document(pieces: [.file(0..<first)] + head.closing, itemCount: 0)
        }
        func mismatch(_ offset: Int, _ why: String) -> FeedByteSplitError {
            FeedByteSplitError(
                kind: .rangeMismatch,
                message: "\(path): bytes \(FeedByteRange.text(range.bytes)): \(why) at byte \(offset) (line \(1 + XMLMarkupScanner.newlines(in: 0..<offset, of: bytes))); take ranges from prepare --split")
        }
        // The head and, for a range after the first, blank lines down to the range's first line (its first item's
        // warnings then name the lines and columns of the whole file), then the range from its line's start.
        var pieces: [Document.Piece] = []
        let pieceStart: Int
        let scanStart: Int
        if range.bytes.lowerBound <= first {
            pieceStart = 0
            scanStart = first
        } else {
            let lower = range.bytes.lowerBound
            guard bytes[lower - 1] == 0x0A else { throw mismatch(lower, "the range does not begin a line") }
            var index = lower
            while index < end, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
            var probe = XMLMarkupScanner(bytes, from: index)
            guard index < end, bytes[index] == UInt8(ascii: "<"), case .start(_, let name, _, _)? = try? probe.next(),
                head.isItem(name, in: bytes)
            else { throw mismatch(index, "the range does not begin with an item") }
            let headLines = 1 + XMLMarkupScanner.newlines(in: 0..<first, of: bytes)
            guard range.firstLine > headLines else {
                throw mismatch(lower, "--first-line \(range.firstLine) is not after the head's last line (\(headLines))")
            }
            pieces = [.file(0..<first), .bytes(Array(repeating: 0x0A, count: range.firstLine - headLines))]
            pieceStart = lower
            scanStart = index
        }
        if range.bytes.upperBound >= bytes.count {
            // The last range: the file's own tail (its closing tags and whatever follows them, repaired by the
            // parser as in the whole file). Its items are counted only when the scan can follow them all.
            return Document(
                pieces: pieces + [.file(pieceStart..<bytes.count)],
                itemCount: try? Self.items(in: bytes, head: head, from: scanStart, before: bytes.count).count)
        }
        let region: (count: Int, end: Int)
        do {
            region = try Self.items(in: bytes, head: head, from: scanStart, before: end)
        } catch {
            throw mismatch(error.offset, "the markup is not well-formed (\(error.reason)), so no range may end after it")
        }
        return Document(pieces: pieces + [.file(pieceStart..<region.end)] + head.closing, itemCount: region.count)
    }

    /// The feed `bytes` as a parser reads it from the item whose start tag begins at `itemStart` on: the head (up
    /// to the first item), blank lines down to that item's line, then the rest of the feed from that line's
    /// start. The parser sees that item, every one after it and the closing tags exactly as in the whole feed (the
    /// same lines and columns in its warnings), and none of the items before it: where a run resumes by bytes
    /// (a new version of a feed with items appended, whose earlier pages it already has).
    ///
    /// - Parameter knownLines: How many line feeds lie before an offset, when known (``FeedAppend/Match/linesBeforeCut``):
    ///   the lines before `itemStart` are then counted from there, not over the whole feed (some 20 ms for 224 MB).
    /// - Returns: `nil` when the feed's head cannot be read as a splitter reads it, `itemStart` is not after the
    ///   first item, does not begin an item, or is not the first markup on its line (a range must begin a line).
    public static func resumedFeed(
        _ bytes: [UInt8], atItemStart itemStart: Int, knownLines: (offset: Int, newlines: Int)? = nil
    ) -> [UInt8]? {
        bytes.withUnsafeBytes { bytes -> [UInt8]? in
            guard let head = try? Head(bytes, path: "the feed"), head.isRegular, !head.declaresEntities,
                let first = head.firstItem, itemStart > first, itemStart < bytes.count,
                let lineStart = lineStart(before: itemStart, in: bytes)
            else { return nil }
            var probe = XMLMarkupScanner(bytes, from: itemStart)
            guard case .start(_, let name, _, _)? = try? probe.next(), head.isItem(name, in: bytes) else { return nil }
            let padding: Int
            if let known = knownLines, known.offset >= first, known.offset <= bytes.count {
                let beforeFirst = XMLMarkupScanner.newlines(in: 0..<first, of: bytes)
                let beforeLine =
                    known.offset <= lineStart
                    ? known.newlines + XMLMarkupScanner.newlines(in: known.offset..<lineStart, of: bytes)
                    : known.newlines - XMLMarkupScanner.newlines(in: lineStart..<known.offset, of: bytes)
                padding = beforeLine - beforeFirst
            } else {
                padding = XMLMarkupScanner.newlines(in: first..<lineStart, of: bytes)
            }
            var resumed: [UInt8] = []
            resumed.reserveCapacity(first + padding + bytes.count - lineStart)
            resumed.append(contentsOf: bytes[0..<first])
            resumed.append(contentsOf: repeatElement(0x0A, count: padding))
            resumed.append(contentsOf: bytes[lineStart...])
            return resumed
        }
    }

    /// The items whose start tag begins in `start..<end`, from an item's start tag: how many, and where the last
    /// one (or what follows it among the items) ends.
    private static func items(
        in bytes: UnsafeRawBufferPointer, head: Head, from start: Int, before end: Int
    ) throws(XMLMarkupScanner.Irregularity) -> (count: Int, end: Int) {
        var count = 0
        var regionEnd = start
        let closed = try walkItems(in: bytes, head: head, from: start) { offset, isItem in
            guard offset < end else { return false }
            if isItem { count += 1 }
            return true
        } passed: { regionEnd = $0 }
        return (count, closed ?? regionEnd)
    }

    /// Follows the markup from an item's start tag, one level above the items (in their parent): `visit` hears of
    /// each token that begins there (its offset, and whether it is an item's start tag) and says whether to go on;
    /// `passed` hears where that level resumes after each. Elements below are checked, not reported: an item inside
    /// an item, or an end tag that closes another element, is an irregularity.
    ///
    /// - Returns: The offset of the parent's end tag when the walk reached it; `nil` when `visit` stopped it or the
    ///   document ended.
    static func walkItems(
        in bytes: UnsafeRawBufferPointer, head: Head, from start: Int,
        visit: (_ offset: Int, _ isItem: Bool) -> Bool, passed: (_ offset: Int) -> Void = { _ in }
    ) throws(XMLMarkupScanner.Irregularity) -> Int? {
        var scanner = XMLMarkupScanner(bytes, from: start)
        var open: [Range<Int>] = []
        while let token = try scanner.next() {
            switch token {
            case .start(let tagStart, let name, _, let selfClosing):
                if open.isEmpty {
                    if !visit(tagStart, head.isItem(name, in: bytes)) { return nil }
                } else if head.isItemName(name, in: bytes) {
                    throw XMLMarkupScanner.Irregularity(offset: tagStart, reason: "an item inside an item")
                }
                if !selfClosing { open.append(name) }
            case .end(let tagStart, let name):
                if open.isEmpty { return tagStart }
                try close(name, at: tagStart, of: &open, scanner)
            case .other(let otherStart, _, _):
                if open.isEmpty && !visit(otherStart, false) { return nil }
            }
            if open.isEmpty { passed(scanner.position) }
        }
        return nil
    }

    /// Pops the element an end tag closes; a name other than the open element's is markup the parser repairs in
    /// its own way, which a cut must not come after.
    private static func close(
        _ name: Range<Int>, at offset: Int, of open: inout [Range<Int>], _ scanner: XMLMarkupScanner
    ) throws(XMLMarkupScanner.Irregularity) {
        guard let last = open.popLast(), scanner.same(last, name) else {
            throw XMLMarkupScanner.Irregularity(offset: offset, reason: "an end tag that closes no open element")
        }
    }

    /// The start of the line `offset` is on when only spaces and tabs come before it there (and a line precedes
    /// it): where a range may begin.
    static func lineStart(before offset: Int, in bytes: UnsafeRawBufferPointer) -> Int? {
        var index = offset
        while index > 0 {
            switch bytes[index - 1] {
            case 0x20, 0x09: index -= 1
            case 0x0A: return index
            default: return nil
            }
        }
        return nil
    }
}

/// A file mapped read-only: the scan touches only the pages it reads, so a worker reads the head and its share.
final class MappedFile {
    let bytes: UnsafeRawBufferPointer

    init(path: String) throws(FeedByteSplitError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw FeedByteSplitError(
                kind: .unreadable, message: "\(path): cannot be opened (\(String(cString: strerror(errno))))")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            throw FeedByteSplitError(kind: .unreadable, message: "\(path): not a regular file; splitting by bytes reads a file")
        }
        let size = Int(status.st_size)
        guard size > 0 else {
            bytes = UnsafeRawBufferPointer(start: nil, count: 0)
            return
        }
        guard let mapped = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0), mapped != MAP_FAILED else {
            throw FeedByteSplitError(
                kind: .unreadable, message: "\(path): cannot be mapped (\(String(cString: strerror(errno))))")
        }
        bytes = UnsafeRawBufferPointer(start: mapped, count: size)
    }

    deinit {
        if let base = bytes.baseAddress { munmap(UnsafeMutableRawPointer(mutating: base), bytes.count) }
    }
}
/// What the scan learns from a feed's beginning, up to its first item: the format (which names items), the
/// namespaces in scope there, and the tags that close the head.
struct Head {
    /// The byte offset of the first item's start tag; `nil` when the feed has none, or the scan met markup it
    /// cannot follow before one.
    private(set) var firstItem: Int?
    /// Whether the scan reached the first item (or the end) through markup it can follow.
    private(set) var isRegular = true
    /// Whether the DOCTYPE has an internal subset (entities whose text may be markup).
    private(set) var declaresEntities = false
    /// `</name>` for each element open at the first item, innermost first.
    private(set) var closing: [FeedByteSplitter.Document.Piece] = []
    private var format: FeedFormat?
    /// Prefix → namespace URI, in scope at the first item (`""` is the default namespace).
    private var namespaces: [String: String] = [:]
    /// The first item's tag name, compared byte for byte before resolving any other name.
    private var itemName: [UInt8] = []

    /// - Throws: `.notSplittable` when the file is not an XML feed the scan can read (naming why).
    init(_ bytes: UnsafeRawBufferPointer, path: String) throws(FeedByteSplitError) {
        func refuse(_ why: String) -> FeedByteSplitError {
            FeedByteSplitError(kind: .notSplittable, message: "\(path): \(why); split it with --count and --items")
        }
        var start = 0
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { start = 3 }
        if bytes.count >= 2, (bytes[0] == 0xFE && bytes[1] == 0xFF) || (bytes[0] == 0xFF && bytes[1] == 0xFE)
            || bytes[0] == 0 || bytes[1] == 0
        {
            throw refuse("it is UTF-16 or UTF-32, and splitting by bytes reads ASCII-compatible encodings")
        }
        while start < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[start]) { start += 1 }
        guard start < bytes.count, bytes[start] == UInt8(ascii: "<") else {
            throw refuse("it is not XML (a JSON Feed?), and splitting by bytes reads XML feeds")
        }
        var scanner = XMLMarkupScanner(bytes, from: start)
        var stack: [(name: Range<Int>, namespaces: [String: String])] = []
        var unknownRoot = false
        scan: while true {
            let token: XMLMarkupScanner.Token?
            do {
                token = try scanner.next()
            } catch {
                // Before any item: the feed is one range, read by the parser as it is.
                isRegular = false
                return
            }
            switch token {
            case nil:
                return
            case .other(_, _, let isDoctypeWithSubset)?:
                if isDoctypeWithSubset { declaresEntities = true }
            case .end?:
                guard !stack.isEmpty else { return }
                namespaces = stack.removeLast().namespaces
            case .start(let tagStart, let name, let attributes, let selfClosing)?:
                let outer = namespaces
                Self.declarations(in: attributes, of: bytes, into: &namespaces)
                if stack.isEmpty {
                    format = Self.format(root: resolve(name, in: bytes))
                    if format == nil {
                        unknownRoot = true
                        break scan
                    }
                } else if isItem(name, in: bytes) {
                    namespaces = outer
                    firstItem = tagStart
                    itemName = Array(bytes[name])
                    closing = stack.reversed().map { .bytes(Array("</".utf8) + Array(bytes[$0.name]) + [0x3E]) }
                    return
                }
                if selfClosing {
                    namespaces = outer
                } else {
                    stack.append((name, outer))
                }
            }
        }
        if unknownRoot { throw refuse("its root element is not <rss>, <rdf:RDF> or <feed>") }
    }

    /// Whether a start tag among the items (a child of their parent) is an item.
    func isItem(_ name: Range<Int>, in bytes: UnsafeRawBufferPointer) -> Bool {
        if !itemName.isEmpty, name.count == itemName.count,
            itemName.withUnsafeBytes({ memcmp($0.baseAddress!, bytes.baseAddress! + name.lowerBound, name.count) == 0 })
        {
            return true
        }
        return isItemName(name, in: bytes)
    }

    /// Whether a tag name resolves to the format's item element (as the reader decides it).
    func isItemName(_ name: Range<Int>, in bytes: UnsafeRawBufferPointer) -> Bool {
        // Most names end otherwise: look at the last bytes before resolving anything.
        let local: StaticString = format == .atom ? "entry" : "item"
        let length = local.utf8CodeUnitCount
        guard name.count >= length,
            name.count == length || bytes[name.upperBound - length - 1] == UInt8(ascii: ":"),
            memcmp(bytes.baseAddress! + name.upperBound - length, local.utf8Start, length) == 0
        else { return false }
        return isResolvedItemName(name, in: bytes)
    }

    private func isResolvedItemName(_ name: Range<Int>, in bytes: UnsafeRawBufferPointer) -> Bool {
        let (namespace, local) = resolve(name, in: bytes)
        switch format {
        case .atom?: return local == "entry" && (namespace == .atom10 || namespace == .atom03 || namespace == .none)
        case .rss?, .rdf?: return local == "item" && (namespace == .none || namespace == .rss10)
        default: return false
        }
    }

    /// A qualified name's namespace (declared, else the conventional meaning of its prefix) and local name.
    private func resolve(_ name: Range<Int>, in bytes: UnsafeRawBufferPointer) -> (Namespace, String) {
        let qualified = String(decoding: bytes[name], as: UTF8.self)
        let parts = qualified.split(separator: ":", maxSplits: 1).map(String.init)
        let (prefix, local) = parts.count == 2 ? (parts[0], parts[1]) : ("", qualified)
        if let uri = namespaces[prefix] { return (uri.isEmpty ? .none : Namespace(uri: uri), local) }
        return (prefix.isEmpty ? .none : Namespace(undeclaredPrefix: prefix), local)
    }

    private static func format(root: (Namespace, String)) -> FeedFormat? {
        switch root {
        case (.none, "rss"), (.rss10, "rss"): return .rss
        case (.rdf, "RDF"): return .rdf
        case (.atom10, "feed"), (.atom03, "feed"), (.none, "feed"): return .atom
        default: return nil
        }
    }

    /// Adds the `xmlns` and `xmlns:prefix` declarations among a tag's attributes.
    private static func declarations(
        in attributes: Range<Int>, of bytes: UnsafeRawBufferPointer, into namespaces: inout [String: String]
    ) {
        let text = String(decoding: bytes[attributes], as: UTF8.self)
        guard text.contains("xmlns") else { return }
        for match in text.matches(of: /xmlns(?::([^\s=]+))?\s*=\s*(?:"([^"]*)"|'([^']*)')/) {
            namespaces[match.1.map(String.init) ?? ""] = String(match.2 ?? match.3 ?? "")
        }
    }
}
