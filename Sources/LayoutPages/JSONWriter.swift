/// Writes JSON straight into a byte buffer.
///
/// Keys come out in the order they are written, numbers in the shortest form that reads back to the same
/// value, strings as UTF-8 with only the escapes JSON requires. So the same values always give the same bytes,
/// on every machine, which the layout's determinism promise relies on. Reflection-based encoders cannot
/// promise key order and cost several times more.
public struct JSONWriter: Sendable {
    public private(set) var bytes: [UInt8] = []
    /// Spaces per nesting level; 0 writes everything on one line.
    private let indentWidth: Int
    /// One entry per open container: whether it already holds an element.
    private var containerHasElements: [Bool] = []
    /// Set after a key: the next value belongs to it and needs no separator.
    private var afterKey = false

    public init(indentWidth: Int = 0, reservingCapacity capacity: Int = 1024) {
        self.indentWidth = indentWidth
        bytes.reserveCapacity(capacity)
    }

    /// Takes the bytes written so far and starts over, keeping the buffer's capacity.
    public mutating func takeBytes() -> [UInt8] {
        let taken = bytes
        bytes.removeAll(keepingCapacity: true)
        return taken
    }

    /// Forgets the bytes written so far, keeping the buffer's capacity: after the caller has used `bytes` in
    /// place, the next record is written into the same memory.
    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        containerHasElements.removeAll(keepingCapacity: true)
        afterKey = false
    }

    /// Appends raw bytes, for example a newline between NDJSON records.
    public mutating func appendRaw(_ raw: String) {
        bytes.append(contentsOf: raw.utf8)
    }

    // MARK: Containers

    public mutating func beginObject() {
        beginValue(); bytes.append(UInt8(ascii: "{")); containerHasElements.append(false)
    }
    public mutating func endObject() { endContainer(UInt8(ascii: "}")) }
    public mutating func beginArray() {
        beginValue(); bytes.append(UInt8(ascii: "[")); containerHasElements.append(false)
    }
    public mutating func endArray() { endContainer(UInt8(ascii: "]")) }

    /// Writes an object key; the next call writes its value.
    public mutating func key(_ name: String) {
        separateElement()
        writeString(name)
        bytes.append(UInt8(ascii: ":"))
        if indentWidth > 0 { bytes.append(UInt8(ascii: " ")) }
        afterKey = true
    }

    // MARK: Scalars

    public mutating func string(_ value: String) { beginValue(); writeString(value) }
    public mutating func bool(_ value: Bool) { beginValue(); bytes.append(contentsOf: (value ? "true" : "false").utf8) }
    public mutating func null() { beginValue(); bytes.append(contentsOf: "null".utf8) }

    public mutating func int(_ value: Int) {
        beginValue()
        writeInteger(value)
    }

    /// Writes a number: whole values without a fraction, others in Swift's shortest round-trip form;
    /// non-finite values, which JSON cannot hold, as `null`.
    public mutating func number(_ value: Double) {
        beginValue()
        if !value.isFinite {
            bytes.append(contentsOf: "null".utf8)
        } else if value == value.rounded(.towardZero), abs(value) < 9_007_199_254_740_992 {
            writeInteger(Int(value))
        } else {
            bytes.append(contentsOf: value.description.utf8)
        }
    }

    // MARK: Key-value shorthands

    public mutating func field(_ name: String, _ value: String) { key(name); string(value) }
    public mutating func field(_ name: String, _ value: Int) { key(name); int(value) }
    public mutating func field(_ name: String, _ value: Double) { key(name); number(value) }
    public mutating func field(_ name: String, _ value: Bool) { key(name); bool(value) }

    /// Writes the key with the value, or with `null` when there is none.
    public mutating func field(_ name: String, _ value: String?) {
        key(name)
        if let value { string(value) } else { null() }
    }

    public mutating func field(_ name: String, _ value: Int?) {
        key(name)
        if let value { int(value) } else { null() }
    }

    // MARK: Internals

    private mutating func beginValue() {
        if afterKey {
            afterKey = false
        } else {
            separateElement()
        }
    }

    private mutating func separateElement() {
        guard let last = containerHasElements.indices.last else { return }
        if containerHasElements[last] { bytes.append(UInt8(ascii: ",")) }
        containerHasElements[last] = true
        newline(depth: containerHasElements.count)
    }

    private mutating func endContainer(_ closing: UInt8) {
        let hadElements = containerHasElements.removeLast()
        if hadElements { newline(depth: containerHasElements.count) }
        bytes.append(closing)
    }

    private mutating func newline(depth: Int) {
        guard indentWidth > 0 else { return }
        bytes.append(UInt8(ascii: "\n"))
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: depth * indentWidth))
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
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[start...]))
        }
    }

    private mutating func writeString(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = value
        // Most strings need no escape at all: append their UTF-8 in one go.
        let appendedWhole = text.withUTF8 { utf8 -> Bool in
            for byte in utf8 where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                return false
            }
            bytes.append(contentsOf: utf8)
            return true
        }
        if !appendedWhole { writeEscaped(text) }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func writeEscaped(_ value: String) {
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\n"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case UInt8(ascii: "\t"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [
                    UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)],
                    hex[Int(byte & 0xF)],
                ])
            default: bytes.append(byte)
            }
        }
    }
}
