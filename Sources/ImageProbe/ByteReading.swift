/// Fixed-width integer reads for the header parsers.
///
/// None of these check bounds: every caller proves `offset + width <= count` first, so that the
/// hot path stays branch-light. They return `Int` because every use is arithmetic on offsets.
extension UnsafeRawBufferPointer {
    @inline(__always)
    func byte(at offset: Int) -> Int { Int(self[offset]) }

    @inline(__always)
    func uint16BigEndian(at offset: Int) -> Int {
        Int(self[offset]) << 8 | Int(self[offset + 1])
    }

    @inline(__always)
    func uint16LittleEndian(at offset: Int) -> Int {
        Int(self[offset]) | Int(self[offset + 1]) << 8
    }

    @inline(__always)
    func uint24LittleEndian(at offset: Int) -> Int {
        Int(self[offset]) | Int(self[offset + 1]) << 8 | Int(self[offset + 2]) << 16
    }

    @inline(__always)
    func uint32BigEndian(at offset: Int) -> Int {
        Int(self[offset]) << 24 | Int(self[offset + 1]) << 16 | Int(self[offset + 2]) << 8
            | Int(self[offset + 3])
    }

    @inline(__always)
    func uint32LittleEndian(at offset: Int) -> Int {
        Int(self[offset]) | Int(self[offset + 1]) << 8 | Int(self[offset + 2]) << 16
            | Int(self[offset + 3]) << 24
    }

    @inline(__always)
    func int32LittleEndian(at offset: Int) -> Int {
        Int(Int32(truncatingIfNeeded: uint32LittleEndian(at: offset)))
    }

    /// Whether the bytes at `offset` equal `expected` (an ASCII tag such as `IHDR`); `false` when
    /// they run past the end.
    @inline(__always)
    func matches(_ expected: StaticString, at offset: Int) -> Bool {
        let length = expected.utf8CodeUnitCount
        guard offset >= 0, offset + length <= count else { return false }
        let pointer = expected.utf8Start
        for index in 0..<length where self[offset + index] != pointer[index] {
            return false
        }
        return true
    }
}
