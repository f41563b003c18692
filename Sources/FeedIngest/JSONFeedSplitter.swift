import ByteTools
/// Cuts a JSON document, as its bytes arrive, into its top-level members and the entries of its
/// `items` array, so that a JSON Feed is read one entry at a time rather than held whole (a 300 MB
/// feed held whole cost 3.9 GB).
///
/// The splitter only finds where each piece ends (brackets and strings); every piece is then
/// parsed by ``JSONValue``, so a syntax error is found and reported as the whole-document parser
/// reports it, with its byte offset in the document.
struct JSONFeedSplitter {
    /// What the document yields, in document order.
    enum Piece {
        /// A top-level member other than the streamed `items` array.
        case member(key: String, value: JSONValue)
        /// One entry of the first `items` array.
        case item(JSONValue)
        /// The first `items` member was an array (its entries came as `.item`).
        case itemsArray
    }

    /// The bytes not yet handed out; `buffer[0]` is document byte `bufferOffset`.
    private var buffer: [UInt8] = []
    private var bufferOffset = 0
    /// The next byte to look at, and where the piece being read began (bytes before it can go).
    private var position = 0
    private var pieceStart = 0
    private var state = State.beforeRoot
    private var scanner = ValueEndScanner()
    private var itemsSeen = false

    private enum State {
        case beforeRoot
        /// The root is not an object: it is read whole and parsed, for the caller to refuse.
        case otherRoot
        case memberNameOrEnd(first: Bool)
        case memberName
        case colon(key: String)
        case memberValueStart(key: String)
        case memberValue(key: String)
        case afterMember
        case itemOrEnd(first: Bool)
        case item
        case afterItem
        case afterRoot
    }

    /// Takes the next bytes and returns the pieces they complete.
    mutating func consume(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONValue.SyntaxError) -> [Piece] {
        buffer.append(contentsOf: bytes)
        return try split(isFinal: false)
    }

    /// Ends the document: returns the last pieces, or throws when it is incomplete.
    mutating func finish() throws(JSONValue.SyntaxError) -> [Piece] {
        try split(isFinal: true)
    }

    private mutating func split(isFinal: Bool) throws(JSONValue.SyntaxError) -> [Piece] {
        var pieces: [Piece] = []
        scanning: while true {
            switch state {
            case .beforeRoot:
                guard skipWhitespace() else { break scanning }
                pieceStart = position
                if buffer[position] == UInt8(ascii: "{") {
                    position += 1
                    state = .memberNameOrEnd(first: true)
                } else {
                    scanner = ValueEndScanner()
                    state = .otherRoot
                }
            case .otherRoot:
                guard scanner.scan(buffer, from: &position, isFinal: isFinal) else { break scanning }
                // Parsed for its syntax errors only: a JSON Feed's root is an object.
                _ = try parse(from: pieceStart, depth: 0)
                state = .afterRoot
            case .memberNameOrEnd(let first):
                guard skipWhitespace() else { break scanning }
                if first && buffer[position] == UInt8(ascii: "}") {
                    position += 1
                    state = .afterRoot
                } else if buffer[position] == UInt8(ascii: "\"") {
                    pieceStart = position
                    scanner = ValueEndScanner()
                    state = .memberName
                } else {
                    throw error("expected a member name")
                }
            case .memberName:
                guard scanner.scan(buffer, from: &position, isFinal: isFinal) else { break scanning }
                guard case .string(let key) = try parse(from: pieceStart, depth: 1) else {
                    throw error("expected a member name")
                }
                state = .colon(key: key)
            case .colon(let key):
                guard skipWhitespace() else { break scanning }
                guard buffer[position] == UInt8(ascii: ":") else { throw error("expected ':'") }
                position += 1
                state = .memberValueStart(key: key)
            case .memberValueStart(let key):
                guard skipWhitespace() else { break scanning }
                if key == "items" && !itemsSeen && buffer[position] == UInt8(ascii: "[") {
                    itemsSeen = true
                    position += 1
                    pieces.append(.itemsArray)
                    state = .itemOrEnd(first: true)
                } else {
                    if key == "items" { itemsSeen = true }
                    pieceStart = position
                    scanner = ValueEndScanner()
                    state = .memberValue(key: key)
                }
            case .memberValue(let key):
                guard scanner.scan(buffer, from: &position, isFinal: isFinal) else { break scanning }
                pieces.append(.member(key: key, value: try parse(from: pieceStart, depth: 1)))
                state = .afterMember
            case .afterMember:
                guard skipWhitespace() else { break scanning }
                state = try separator(closing: "}", next: .memberNameOrEnd(first: false), closed: .afterRoot)
            case .itemOrEnd(let first):
                guard skipWhitespace() else { break scanning }
                if first && buffer[position] == UInt8(ascii: "]") {
                    position += 1
                    state = .afterMember
                } else {
                    pieceStart = position
                    scanner = ValueEndScanner()
                    state = .item
                }
            case .item:
                guard scanner.scan(buffer, from: &position, isFinal: isFinal) else { break scanning }
                pieces.append(.item(try parse(from: pieceStart, depth: 2)))
                state = .afterItem
            case .afterItem:
                guard skipWhitespace() else { break scanning }
                state = try separator(closing: "]", next: .itemOrEnd(first: false), closed: .afterMember)
            case .afterRoot:
                guard skipWhitespace() else { break scanning }
                throw error("text after the JSON value")
            }
        }
        if isFinal {
            switch state {
            case .afterRoot: break
            case .beforeRoot: throw error("unexpected end")
            case .item, .afterItem, .itemOrEnd: throw error("unexpected end in array")
            default: throw error("unexpected end in object")
            }
        }
        dropHandedOut()
        return pieces
    }

    /// Takes the `,` or the closing bracket after a member or an entry, and says which state follows.
    private mutating func separator(
        closing: Unicode.Scalar, next: State, closed: State
    ) throws(JSONValue.SyntaxError) -> State {
        let byte = buffer[position]
        guard byte == UInt8(ascii: ",") || byte == UInt8(ascii: closing) else {
            throw error("expected ',' or '\(closing)'")
        }
        position += 1
        return byte == UInt8(ascii: ",") ? next : closed
    }

    /// Moves past whitespace; false when the buffer ends first.
    private mutating func skipWhitespace() -> Bool {
        while position < buffer.count, JSONValue.isWhitespace(buffer[position]) { position += 1 }
        return position < buffer.count
    }

    /// Parses `buffer[start..<position]`, nested `depth` deep in the document (the nesting limit counts
    /// from the root), with errors at their document offset.
    private func parse(from start: Int, depth: Int) throws(JSONValue.SyntaxError) -> JSONValue {
        do {
            return try JSONValue.parse(Array(buffer[start..<position]), depth: depth)
        } catch {
            throw JSONValue.SyntaxError(offset: bufferOffset + start + error.offset, reason: error.reason)
        }
    }

    private func error(_ reason: String) -> JSONValue.SyntaxError {
        JSONValue.SyntaxError(offset: bufferOffset + position, reason: reason)
    }

    /// Forgets the bytes before the piece being read, once they are worth moving.
    private mutating func dropHandedOut() {
        let keepFrom: Int
        switch state {
        case .otherRoot, .memberName, .memberValue, .item: keepFrom = pieceStart
        default: keepFrom = position
        }
        guard keepFrom >= 1 << 16 || keepFrom == buffer.count else { return }
        buffer.removeFirst(keepFrom)
        bufferOffset += keepFrom
        position -= keepFrom
        pieceStart -= keepFrom
    }
}

/// Finds where one JSON value ends, across as many calls as its bytes take to arrive: it follows
/// strings (with their escapes) and bracket depth, and ends a number or literal at the first byte
/// that cannot continue it. It does not check the value; the parser does.
struct ValueEndScanner {
    private var started = false
    private var depth = 0
    private var inString = false
    private var escaped = false
    private var isScalar = false

    /// Advances `position` through `bytes`; true once it is just past the value's end.
    mutating func scan(_ bytes: [UInt8], from position: inout Int, isFinal: Bool) -> Bool {
        while position < bytes.count {
            let byte = bytes[position]
            if !started {
                started = true
                switch byte {
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth = 1
                case UInt8(ascii: "\""): inString = true
                default: isScalar = true
                }
                position += 1
                continue
            }
            if inString {
                position += 1
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                    if depth == 0 { return true }
                }
            } else if isScalar {
                switch byte {
                case UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: ":"), UInt8(ascii: "\""),
                    UInt8(ascii: "{"), UInt8(ascii: "["):
                    return true
                case _ where JSONValue.isWhitespace(byte): return true
                default: position += 1
                }
            } else {
                position += 1
                switch byte {
                case UInt8(ascii: "\""): inString = true
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return true }
                default: break
                }
            }
        }
        // A scalar at the very end of the input ends there; anything else is cut off, which the
        // parser reports.
        return isFinal && started
    }
}
