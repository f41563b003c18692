#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Finds the tags of an XML document in its raw bytes without parsing it: where each start and end tag is and
/// what it is named, with comments, CDATA sections, processing instructions and the DOCTYPE skipped whole, and
/// `>` inside quoted attribute values not taken for a tag's end. It is what splits a feed by bytes (see
/// ``FeedByteSplitter``): a tenth of a parse's work, exact on well-formed markup, and it says where markup stops
/// being well-formed instead of guessing past it.
struct XMLMarkupScanner {
    enum Token {
        /// `<name …>` or `<name …/>`: the tag starts at `start`, the name's bytes are `name`, and the attributes'
        /// bytes (between the name and the closing `>` or `/>`) are `attributes`.
        case start(start: Int, name: Range<Int>, attributes: Range<Int>, selfClosing: Bool)
        /// `</name>`, starting at `start`.
        case end(start: Int, name: Range<Int>)
        /// A comment, CDATA section, processing instruction or DOCTYPE, from `start` to `end`.
        case other(start: Int, end: Int, isDoctypeWithSubset: Bool)
    }

    /// Where the markup stops being something the scanner can follow exactly.
    struct Irregularity: Error {
        var offset: Int
        var reason: String
    }

    let bytes: UnsafeRawBufferPointer
    /// The next byte to look at; always in character data between tokens.
    var position: Int

    init(_ bytes: UnsafeRawBufferPointer, from position: Int = 0) {
        self.bytes = bytes
        self.position = position
    }

    /// The next token after `position` (character data before it is passed over), or `nil` at the end.
    mutating func next() throws(Irregularity) -> Token? {
        guard let open = find(UInt8(ascii: "<"), from: position) else {
            position = bytes.count
            return nil
        }
        let start = open
        guard open + 1 < bytes.count else { throw Irregularity(offset: open, reason: "the document ends inside a tag") }
        switch bytes[open + 1] {
        case UInt8(ascii: "/"):
            let nameStart = open + 2
            let nameEnd = nameEnd(from: nameStart)
            guard nameEnd > nameStart else { throw Irregularity(offset: open, reason: "an end tag without a name") }
            guard let close = find(UInt8(ascii: ">"), from: nameEnd) else {
                throw Irregularity(offset: open, reason: "the document ends inside an end tag")
            }
            position = close + 1
            return .end(start: start, name: nameStart..<nameEnd)
        case UInt8(ascii: "!"):
            if matches("<!--", at: open) {
                guard let close = find("-->", from: open + 4) else {
                    throw Irregularity(offset: open, reason: "the document ends inside a comment")
                }
                position = close + 3
            } else if matches("<![CDATA[", at: open) {
                guard let close = find("]]>", from: open + 9) else {
                    throw Irregularity(offset: open, reason: "the document ends inside a CDATA section")
                }
                position = close + 3
            } else {
                return try declaration(from: open)
            }
            return .other(start: start, end: position, isDoctypeWithSubset: false)
        case UInt8(ascii: "?"):
            guard let close = find("?>", from: open + 2) else {
                throw Irregularity(offset: open, reason: "the document ends inside a processing instruction")
            }
            position = close + 2
            return .other(start: start, end: position, isDoctypeWithSubset: false)
        default:
            let nameStart = open + 1
            let nameEnd = nameEnd(from: nameStart)
            guard nameEnd > nameStart else {
                throw Irregularity(offset: open, reason: "a '<' that starts no tag")
            }
            // The tag ends at the first '>' outside a quoted attribute value: the first '>' when no quote or '<'
            // comes before it (most tags), else found byte by byte.
            let close: Int
            if let first = find(UInt8(ascii: ">"), from: nameEnd), !contains(UInt8(ascii: "\""), in: nameEnd..<first),
                !contains(UInt8(ascii: "'"), in: nameEnd..<first), !contains(UInt8(ascii: "<"), in: nameEnd..<first)
            {
                close = first
            } else if let found = closingBracket(from: nameEnd, isDeclaration: false) {
                close = found.offset
            } else {
                throw Irregularity(offset: open, reason: "a tag that is never closed")
            }
            let selfClosing = close > nameEnd && bytes[close - 1] == UInt8(ascii: "/")
            position = close + 1
            return .start(
                start: start, name: nameStart..<nameEnd, attributes: nameEnd..<(selfClosing ? close - 1 : close),
                selfClosing: selfClosing)
        }
    }

    /// `<!DOCTYPE …>` with its internal subset (`[…]`, whose declarations hold quoted `>` and brackets).
    private mutating func declaration(from open: Int) throws(Irregularity) -> Token {
        guard let (close, hadSubset) = closingBracket(from: open + 2, isDeclaration: true) else {
            throw Irregularity(offset: open, reason: "the document ends inside a declaration")
        }
        position = close + 1
        return .other(start: open, end: position, isDoctypeWithSubset: hadSubset)
    }

    /// The `>` that closes a tag or declaration: the first from `start` outside quoted values (and, in a
    /// declaration, outside its `[…]` internal subset). `nil` at the end of the document, or, in a tag, at a `<`
    /// before it (a tag that never closes).
    private func closingBracket(from start: Int, isDeclaration: Bool) -> (offset: Int, hadSubset: Bool)? {
        var index = start
        var quote: UInt8 = 0
        var subsetDepth = 0
        var hadSubset = false
        while index < bytes.count {
            let byte = bytes[index]
            if quote != 0 {
                if byte == quote { quote = 0 }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: ">") && subsetDepth <= 0 {
                return (index, hadSubset)
            } else if !isDeclaration {
                if byte == UInt8(ascii: "<") { return nil }
            } else if byte == UInt8(ascii: "[") {
                subsetDepth += 1
                hadSubset = true
            } else if byte == UInt8(ascii: "]") {
                subsetDepth -= 1
            }
            index += 1
        }
        return nil
    }

    /// The end of a name starting at `start`: the first whitespace, `/`, `>` (or the end).
    private func nameEnd(from start: Int) -> Int {
        var index = start
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: "/"), UInt8(ascii: ">"), UInt8(ascii: "<"): return index
            default: index += 1
            }
        }
        return index
    }

    func find(_ byte: UInt8, from start: Int) -> Int? {
        guard start < bytes.count, let base = bytes.baseAddress else { return nil }
        guard let found = memchr(base + start, Int32(byte), bytes.count - start) else { return nil }
        return base.distance(to: UnsafeRawPointer(found))
    }

    private func contains(_ byte: UInt8, in range: Range<Int>) -> Bool {
        guard !range.isEmpty, let base = bytes.baseAddress else { return false }
        return memchr(base + range.lowerBound, Int32(byte), range.count) != nil
    }

    private func find(_ text: StaticString, from start: Int) -> Int? {
        let first = text.utf8Start.pointee
        var index = start
        while let candidate = find(first, from: index) {
            if matches(text, at: candidate) { return candidate }
            index = candidate + 1
        }
        return nil
    }

    func matches(_ text: StaticString, at offset: Int) -> Bool {
        let count = text.utf8CodeUnitCount
        guard offset + count <= bytes.count else { return false }
        for index in 0..<count where bytes[offset + index] != text.utf8Start[index] { return false }
        return true
    }

    /// Whether the bytes at `range` equal those at `other`.
    func same(_ range: Range<Int>, _ other: Range<Int>) -> Bool {
        guard range.count == other.count, let base = bytes.baseAddress else { return false }
        return memcmp(base + range.lowerBound, base + other.lowerBound, range.count) == 0
    }

    /// How many `\n` bytes are in `range` of `bytes`.
    static func newlines(in range: Range<Int>, of bytes: UnsafeRawBufferPointer) -> Int {
        guard let base = bytes.baseAddress, !range.isEmpty else { return 0 }
        // Sixteen bytes at a time, counted in byte lanes that are summed before any can overflow: a resumed run
        // counts the lines of a few hundred megabytes.
        let newline = SIMD16<UInt8>(repeating: 0x0A)
        let none = SIMD16<UInt8>()
        var count = 0
        var index = range.lowerBound
        while range.upperBound - index >= 16 {
            var lanes = SIMD16<UInt8>()
            let rounds = min(255, (range.upperBound - index) / 16)
            for _ in 0..<rounds {
                let chunk = UnsafeRawPointer(base + index).loadUnaligned(as: SIMD16<UInt8>.self)
                lanes &+= none.replacing(with: 1, where: chunk .== newline)
                index += 16
            }
            count += Int(SIMD16<UInt16>(truncatingIfNeeded: lanes).wrappedSum())
        }
        while index < range.upperBound {
            if bytes[index] == 0x0A { count += 1 }
            index += 1
        }
        return count
    }
}
