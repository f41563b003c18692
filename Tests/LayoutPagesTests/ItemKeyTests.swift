import Testing

@testable import LayoutPages

/// The expected keys were computed apart from this code (FNV-1a 64 over the UTF-8 bytes, in Python), so a change to
/// the hash, the byte order or the padding fails here before it changes every page.
@Suite struct ItemKeyTests {
    @Test(arguments: [
        ("https://example.com/pins/1001", "7ed1ea75a8d1975f"),
        ("urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a", "e632f1068a40333d"),
        // Non-ASCII: the bytes are UTF-8's.
        ("tag:example.org,2026:photo/é", "44ce0ebf4fb67442"),
        // Leading zero digits are kept: every key has 16.
        ("item-18380", "00051cc963a661b1"),
    ])
    func keysAreFNV1aOfTheIDsUTF8Bytes(id: String, key: String) {
        #expect(ItemKey.key(forID: id) == key)
    }

    @Test func theSameIDHasTheSameKeyAndOthersDiffer() {
        #expect(ItemKey.key(forID: "item-1") == ItemKey.key(forID: String("item-1")))
        #expect(ItemKey.key(forID: "item-1") != ItemKey.key(forID: "item-2"))
    }
}
