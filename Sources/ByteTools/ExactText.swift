#if canImport(Glibc)
    import Glibc
#endif

/// A text as a key by its exact UTF-8, not by `String`'s canonical equivalence: a composed and a decomposed "é"
/// are different file names and may shape differently, so they must not share a cache entry. Hashing the bytes
/// also skips the normalization `String` hashing does for non-ASCII text (most of a CJK caption's lookup).
public struct ExactText: Hashable, Sendable {
    public let text: String

    public init(_ text: String) { self.text = text }

    public static func == (lhs: ExactText, rhs: ExactText) -> Bool {
        // One memcmp: `utf8.elementsEqual` went byte by byte through the views, for every repeated photo's path.
        var (left, right) = (lhs.text, rhs.text)
        return left.withUTF8 { left in
            right.withUTF8 { right in
                left.count == right.count
                    && (left.count == 0 || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0)
            }
        }
    }

    public func hash(into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
