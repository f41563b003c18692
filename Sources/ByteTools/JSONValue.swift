/// A parsed JSON value, from a small parser written for JSON Feed.
///
/// Foundation could do this now (the ICU clash that once kept it out of FeedIngest was fixed
/// in the shim headers), but it is slower and, with `JSONSerialization`, far larger, and it
/// would change what the reader outputs. Measured on an 81 MB generated JSON Feed (95,000 items),
/// parse and field extraction alone, release build, median of 3 runs (wall time, peak RSS with
/// the input held): this parser 2.1 s, 307 MiB; `JSONDecoder` 4.1 s, 310 MiB;
/// `JSONSerialization` 6.4 s, 1,373 MiB. Both would also change output: a number loses its text
/// (`1.50` becomes `1.5`), whole feeds with a lone surrogate, a raw control character or an
/// unknown escape in a string are refused (read here as U+FFFD or as written), the `invalidJSON`
/// error loses its byte offset, and `JSONSerialization` keeps the last of repeated keys, not
/// the first.
package enum JSONValue: Equatable {
    case object([(String, JSONValue)])
    case array([JSONValue])
    case string(String)
    case number(String)
    case bool(Bool)
    case null

    package static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.object(let a), .object(let b)): return a.map(\.0) == b.map(\.0) && a.map(\.1) == b.map(\.1)
        case (.array(let a), .array(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b
        case (.bool(let a), .bool(let b)): return a == b
        case (.null, .null): return true
        default: return false
        }
    }

    /// The member named `key` of an object (the first, if repeated).
    package subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first(where: { $0.0 == key })?.1
    }

    package var stringValue: String? {
        switch self {
        case .string(let value): return value
        case .number(let value): return value
        default: return nil
        }
    }

    package var arrayValue: [JSONValue]? {
        if case .array(let values) = self { return values }
        return nil
    }

    /// A syntax error at a byte offset.
    package struct SyntaxError: Error {
        package var offset: Int
        package var reason: String

        package init(offset: Int, reason: String) {
            self.offset = offset
            self.reason = reason
        }
    }

    /// Parses one JSON document (surrounding whitespace allowed).
    /// - Parameter depth: how deep in a larger document the value sits, for the nesting limit (see
    ///   ``JSONFeedSplitter``).
    package static func parse(_ bytes: [UInt8], depth: Int = 0) throws(SyntaxError) -> JSONValue {
        var parser = Parser(bytes: bytes)
        parser.skipWhitespace()
        let value = try parser.value(depth: depth)
        parser.skipWhitespace()
        guard parser.position == bytes.count else {
            throw SyntaxError(offset: parser.position, reason: "text after the JSON value")
        }
        return value
    }

    /// JSON's four whitespace bytes.
    @inline(__always)
    package static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    private struct Parser {
        let bytes: [UInt8]
        var position = 0

        mutating func skipWhitespace() {
            while position < bytes.count, JSONValue.isWhitespace(bytes[position]) { position += 1 }
        }

        func error(_ reason: String) -> SyntaxError { SyntaxError(offset: position, reason: reason) }

        mutating func value(depth: Int) throws(SyntaxError) -> JSONValue {
            guard depth < 512 else { throw error("nesting deeper than 512") }
            guard position < bytes.count else { throw error("unexpected end") }
            switch bytes[position] {
            case UInt8(ascii: "{"):
                position += 1
                var members: [(String, JSONValue)] = []
                skipWhitespace()
                if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
                    position += 1
                    return .object(members)
                }
                while true {
                    skipWhitespace()
                    guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                        throw error("expected a member name")
                    }
                    let key = try string()
                    skipWhitespace()
                    guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else {
                        throw error("expected ':'")
                    }
                    position += 1
                    skipWhitespace()
                    members.append((key, try value(depth: depth + 1)))
                    skipWhitespace()
                    guard position < bytes.count else { throw error("unexpected end in object") }
                    if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
                    if bytes[position] == UInt8(ascii: "}") { position += 1; return .object(members) }
                    throw error("expected ',' or '}'")
                }
            case UInt8(ascii: "["):
                position += 1
                var values: [JSONValue] = []
                skipWhitespace()
                if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
                    position += 1
                    return .array(values)
                }
                while true {
                    skipWhitespace()
                    values.append(try value(depth: depth + 1))
                    skipWhitespace()
                    guard position < bytes.count else { throw error("unexpected end in array") }
                    if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
                    if bytes[position] == UInt8(ascii: "]") { position += 1; return .array(values) }
                    throw error("expected ',' or ']'")
                }
            case UInt8(ascii: "\""):
                return .string(try string())
            case UInt8(ascii: "t"): return try literal("true", .bool(true))
            case UInt8(ascii: "f"): return try literal("false", .bool(false))
            case UInt8(ascii: "n"): return try literal("null", .null)
            default:
                let start = position
                while position < bytes.count, "+-0123456789.eE".utf8.contains(bytes[position]) { position += 1 }
                guard position > start else { throw error("unexpected character") }
                return .number(String(decoding: bytes[start..<position], as: UTF8.self))
            }
        }

        mutating func literal(_ word: String, _ result: JSONValue) throws(SyntaxError) -> JSONValue {
            let utf8 = Array(word.utf8)
            guard position + utf8.count <= bytes.count, Array(bytes[position..<position + utf8.count]) == utf8 else {
                throw error("unexpected word")
            }
            position += utf8.count
            return result
        }

        mutating func hex4() throws(SyntaxError) -> UInt32 {
            guard position + 4 <= bytes.count else { throw error("short \\u escape") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[position]
                let digit: UInt32
                switch byte {
                case 0x30...0x39: digit = UInt32(byte - 0x30)
                case 0x41...0x46: digit = UInt32(byte - 0x41 + 10)
                case 0x61...0x66: digit = UInt32(byte - 0x61 + 10)
                default: throw error("bad \\u escape")
                }
                value = value << 4 | digit
                position += 1
            }
            return value
        }

        mutating func string() throws(SyntaxError) -> String {
            position += 1  // opening quote
            var output: [UInt8] = []
            while position < bytes.count {
                let byte = bytes[position]
                position += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(decoding: output, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard position < bytes.count else { throw error("unexpected end in escape") }
                    let escape = bytes[position]
                    position += 1
                    switch escape {
                    case UInt8(ascii: "n"): output.append(0x0A)
                    case UInt8(ascii: "t"): output.append(0x09)
                    case UInt8(ascii: "r"): output.append(0x0D)
                    case UInt8(ascii: "b"): output.append(0x08)
                    case UInt8(ascii: "f"): output.append(0x0C)
                    case UInt8(ascii: "u"):
                        var scalar = try hex4()
                        if (0xD800...0xDBFF).contains(scalar), position + 6 <= bytes.count,
                            bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u")
                        {
                            position += 2
                            let low = try hex4()
                            scalar =
                                (0xDC00...0xDFFF).contains(low)
                                ? 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00) : 0xFFFD
                        } else if (0xD800...0xDFFF).contains(scalar) {
                            scalar = 0xFFFD
                        }
                        output.appendUTF8(scalar)
                    default: output.append(escape)  // \" \\ \/
                    }
                default:
                    output.append(byte)
                }
            }
            throw error("unterminated string")
        }
    }
}
