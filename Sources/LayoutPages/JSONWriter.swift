import ByteTools
import FeedIngest

/// Writes JSON straight into a byte buffer.
///
/// Keys come out in the order they are written, numbers in the shortest form that reads back to the same
/// value, strings as UTF-8 with only the escapes JSON requires. So the same values always give the same bytes,
/// on every machine, which the layout's determinism promise relies on. Reflection-based encoders cannot
/// promise key order and cost several times more.
public struct JSONWriter: @unchecked Sendable {
    /// The output, behind a reference so that appends write through a pointer: an array checked its uniqueness on
    /// every append, a runtime call for each quote, comma and key of a record. The writer keeps value semantics by
    /// copying the buffer before the first write after a copy of the writer (checked once per key or value).
    private var storage: GrowableBytes
    /// How many bytes were written.
    public var count: Int { storage.count }
    /// Spaces per nesting level; 0 writes everything on one line.
    private let indentWidth: Int
    /// How many containers are open, and for each (bit `depth - 1`) whether it already holds an element: bits
    /// rather than an array, which cost a uniqueness check on every element written.
    private var openContainers = 0
    private var containerHasElements: UInt64 = 0
    /// The deepest nesting the bits can follow; the records and pages nest a few levels.
    private static let maximumDepth = 64
    /// Set after a key: the next value belongs to it and needs no separator.
    private var afterKey = false

    public init(indentWidth: Int = 0, reservingCapacity capacity: Int = 1024) {
        self.indentWidth = indentWidth
        storage = GrowableBytes(capacity: capacity)
    }

    /// The bytes written so far, as a new array.
    public var bytes: [UInt8] { storage.withUnsafeBufferPointer { Array($0) } }

    /// Calls `body` with the bytes written so far, in place.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try storage.withUnsafeBufferPointer { try body(UnsafeRawBufferPointer($0)) }
    }

    /// Takes the bytes written so far and starts over in the same buffer.
    public mutating func takeBytes() -> [UInt8] {
        let taken = bytes
        makeUnique()
        storage.removeAll()
        return taken
    }

    /// Forgets the bytes written so far, keeping the buffer: after the caller has used the bytes in place
    /// (``withUnsafeBytes(_:)``), the next record is written into the same memory.
    public mutating func removeAll() {
        makeUnique()
        storage.removeAll()
        openContainers = 0
        containerHasElements = 0
        afterKey = false
    }

    /// Appends raw bytes, for example a newline between NDJSON records.
    public mutating func appendRaw(_ raw: String) {
        makeUnique()
        var raw = raw
        raw.withUTF8 { append($0) }
    }

    // MARK: Storage

    /// Gives this writer a storage of its own before it writes, when a copy of it shares the storage.
    @inline(__always)
    private mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
    }

    // The appends below write to the storage as it is: every public entry point that writes calls `makeUnique`
    // first (`key`, `beginValue` for values and containers, `endContainer`, `appendRaw`).

    @inline(__always)
    private func append(_ byte: UInt8) { storage.append(byte) }

    /// Numbers and literals: a few bytes each.
    @inline(__always)
    private func append(_ source: UnsafeRawBufferPointer) { storage.appendShort(source) }

    @inline(__always)
    private func append(_ source: UnsafeBufferPointer<UInt8>) { storage.append(contentsOf: source) }

    private func append(contentsOf bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    private func appendASCII(_ text: StaticString) {
        append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    // MARK: Containers

    public mutating func beginObject() { beginContainer(UInt8(ascii: "{")) }
    public mutating func endObject() { endContainer(UInt8(ascii: "}")) }
    public mutating func beginArray() { beginContainer(UInt8(ascii: "[")) }
    public mutating func endArray() { endContainer(UInt8(ascii: "]")) }

    /// Writes an object key named in the code; the next call writes its value.
    ///
    /// The name is written as it is, quotes and colon in one copy: the records' keys are plain identifiers, and
    /// checking each for escapes cost more than the copy.
    public mutating func key(_ name: StaticString) {
        assert(
            !UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount).contains(where: Self.mustEscape),
            "a key named in the code needs no escape")
        makeUnique()
        separateElement()
        let length = name.utf8CodeUnitCount
        let target = storage.appendUninitialized(length + 3)
        target[0] = UInt8(ascii: "\"")
        GrowableBytes.copy(to: target + 1, from: name.utf8Start, count: length)
        target[length + 1] = UInt8(ascii: "\"")
        target[length + 2] = UInt8(ascii: ":")
        if indentWidth > 0 { append(UInt8(ascii: " ")) }
        afterKey = true
    }

    /// Writes an object key that comes from data (a warning code, a name read from input), escaped as needed.
    public mutating func key(text name: String) {
        makeUnique()
        separateElement()
        writeString(name)
        append(UInt8(ascii: ":"))
        if indentWidth > 0 { append(UInt8(ascii: " ")) }
        afterKey = true
    }

    // MARK: Scalars

    public mutating func string(_ value: String) { beginValue(); writeString(value) }
    public mutating func bool(_ value: Bool) { beginValue(); appendASCII(value ? "true" : "false") }
    public mutating func null() { beginValue(); appendASCII("null") }

    public mutating func int(_ value: Int) {
        beginValue()
        writeInteger(value)
    }

    /// Writes a number: whole values without a fraction, others in Swift's shortest round-trip form;
    /// non-finite values, which JSON cannot hold, as `null`.
    public mutating func number(_ value: Double) {
        beginValue()
        if !value.isFinite {
            appendASCII("null")
        } else if value == value.rounded(.towardZero), abs(value) < 9_007_199_254_740_992 {
            writeInteger(Int(value))
        } else {
            appendRaw(value.description)
        }
    }

    /// Where the next byte goes: taken before and after a value, the range for ``repeatValue(_:)``.
    public var position: Int { storage.count }

    /// Writes a value again, as bytes this writer already wrote (`range`, from ``position`` before the value to
    /// after it), instead of encoding it again. Only a one-line writer can: indented, a value's bytes depend on
    /// its depth.
    /// - Returns: false (and writes nothing) for an indented writer.
    public mutating func repeatValue(_ range: Range<Int>) -> Bool {
        guard indentWidth == 0 else { return false }
        beginValue()
        storage.appendCopy(of: range)
        return true
    }

    // MARK: Key-value shorthands

    public mutating func field(_ name: StaticString, _ value: String) { key(name); string(value) }
    public mutating func field(_ name: StaticString, _ value: Int) { key(name); int(value) }
    public mutating func field(_ name: StaticString, _ value: Double) { key(name); number(value) }
    public mutating func field(_ name: StaticString, _ value: Bool) { key(name); bool(value) }

    /// Writes the key with the value, or with `null` when there is none.
    public mutating func field(_ name: StaticString, _ value: String?) {
        key(name)
        if let value { string(value) } else { null() }
    }

    public mutating func field(_ name: StaticString, _ value: Int?) {
        key(name)
        if let value { int(value) } else { null() }
    }

    // MARK: Internals

    private mutating func beginValue() {
        makeUnique()
        if afterKey {
            afterKey = false
        } else {
            separateElement()
        }
    }

    private mutating func separateElement() {
        guard openContainers > 0 else { return }
        let innermost: UInt64 = 1 << (openContainers - 1)
        if containerHasElements & innermost != 0 { append(UInt8(ascii: ",")) }
        containerHasElements |= innermost
        if indentWidth > 0 { newline(depth: openContainers) }
    }

    private mutating func beginContainer(_ opening: UInt8) {
        precondition(openContainers < Self.maximumDepth, "JSONWriter nests at most \(Self.maximumDepth) containers")
        beginValue()
        append(opening)
        openContainers += 1
    }

    private mutating func endContainer(_ closing: UInt8) {
        makeUnique()
        precondition(openContainers > 0, "JSONWriter: no container to close")
        let innermost: UInt64 = 1 << (openContainers - 1)
        let hadElements = containerHasElements & innermost != 0
        containerHasElements &= ~innermost
        openContainers -= 1
        if hadElements && indentWidth > 0 { newline(depth: openContainers) }
        append(closing)
    }

    private mutating func newline(depth: Int) {
        append(UInt8(ascii: "\n"))
        for _ in 0..<(depth * indentWidth) { append(UInt8(ascii: " ")) }
    }

    private mutating func writeInteger(_ value: Int) {
        // Digits go into a small buffer right to left, then into the output in one append.
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var magnitude = value.magnitude
            var start = buffer.count
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                start -= 1
                buffer[start] = UInt8(ascii: "-")
            }
            append(UnsafeRawBufferPointer(rebasing: buffer[start...]))
        }
    }

    private mutating func writeString(_ value: String) {
        // Most strings need no escape at all: their UTF-8 goes in with the quotes, checked as it is copied.
        let appendedWhole = value.utf8.withContiguousStorageIfAvailable { Self.appendQuotedIfPlain($0, to: storage) }
        if appendedWhole != true {
            append(UInt8(ascii: "\""))
            writeEscaped(value)
            append(UInt8(ascii: "\""))
        }
    }

    /// Appends `utf8` in quotes when it holds no byte JSON must escape (a control character, `"` or `\`), copying
    /// and checking eight bytes at a time; appends nothing and returns false when it does.
    private static func appendQuotedIfPlain(_ utf8: UnsafeBufferPointer<UInt8>, to storage: GrowableBytes) -> Bool {
        let count = utf8.count
        let mark = storage.count
        let target = storage.appendUninitialized(count + 2)
        target[0] = UInt8(ascii: "\"")
        target[count + 1] = UInt8(ascii: "\"")
        guard let start = utf8.baseAddress else { return true }
        let source = UnsafeRawPointer(start)
        let output = UnsafeMutableRawPointer(target + 1)
        /// Copies the word at `offset`; false when it holds a byte to escape.
        @inline(__always) func copyWord(at offset: Int) -> Bool {
            let word = ByteWord.load(source, at: offset)
            // UTF-8's bytes at or above 0x80 are never below 0x20.
            guard !ByteWord.hasByte(below: 0x20, in: word), !ByteWord.hasByte(0x22, in: word),
                !ByteWord.hasByte(0x5C, in: word)
            else { return false }
            output.storeBytes(of: word.littleEndian, toByteOffset: offset, as: UInt64.self)
            return true
        }
        var plain = true
        if count >= 8 {
            // Whole words, then the last eight bytes again (overlapping the word before) for the rest.
            var offset = 0
            while plain && offset &+ 8 <= count {
                plain = copyWord(at: offset)
                offset &+= 8
            }
            if plain && offset < count { plain = copyWord(at: count &- 8) }
        } else {
            for index in 0..<count {
                guard !Self.mustEscape(start[index]) else {
                    plain = false
                    break
                }
                target[1 + index] = start[index]
            }
        }
        if !plain { storage.removeBytes(after: mark) }
        return plain
    }

    /// Whether JSON must escape `byte`: a control character, `"` or `\`.
    @inline(__always)
    private static func mustEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    private mutating func writeEscaped(_ value: String) {
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\n"): append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case UInt8(ascii: "\t"): append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                append(contentsOf: [
                    UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)],
                    hex[Int(byte & 0xF)],
                ])
            default: append(byte)
            }
        }
    }
}
