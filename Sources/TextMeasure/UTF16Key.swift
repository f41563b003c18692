/// A cache key made of UTF-16 code units.
///
/// `[UInt16]` is Hashable already, but it feeds the hasher one element at a time; hashing
/// the units as one block of bytes is several times faster, and the warm path of
/// ``TextMeasurer`` does one such lookup per word.
struct UTF16Key: Hashable, Sendable {
    var units: [UInt16]

    init(_ units: [UInt16]) { self.units = units }

    func hash(into hasher: inout Hasher) {
        units.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    static func == (left: UTF16Key, right: UTF16Key) -> Bool {
        left.units.count == right.units.count
            && left.units.withUnsafeBufferPointer { leftBuffer in
                right.units.withUnsafeBufferPointer { rightBuffer in
                    leftBuffer.elementsEqual(rightBuffer)
                }
            }
    }
}
