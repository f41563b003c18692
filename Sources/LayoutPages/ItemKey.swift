/// An item's `key` in the pages: the same item has the same key in every version of a feed, so a client that
/// switches to a newer layout finds the pins it showed, and a service counts what changed between versions.
///
/// It is a digest of the item's `id` (the guid, Atom id, `dc:identifier` or JSON Feed id; else the link; else a
/// digest of title, date and caption): 16 lowercase hex digits of FNV-1a 64 over its UTF-8 bytes, whatever the
/// id's length. It depends on nothing else (not the item's place, not the options), so a resumed layout, every
/// breakpoint and every version agree. A feed that repeats an id repeats its key: such items are one item to
/// anyone matching them across versions, and within a page the `index` tells them apart.
public enum ItemKey {
    /// The key of the item with this id.
    public static func key(forID id: String) -> String {
        var hash = StableHash()
        hash.combine(id)
        return hexDigits(hash.value)
    }

    /// Sixteen lowercase hex digits, zero-padded.
    static func hexDigits(_ value: UInt64) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(unsafeUninitializedCapacity: 16) { buffer in
            for position in 0..<16 {
                buffer[position] = digits[Int((value >> UInt64(60 - 4 * position)) & 0xF)]
            }
            return 16
        }
    }
}
