internal import CLibXML2

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The SAX2 attribute array: five pointers per attribute (local name, prefix, URI, value start,
/// value end).
struct Attributes {
    let pointer: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
    let count: Int
    /// Unowned and unchecked: an `Attributes` lives only inside the reader's own SAX callback, and
    /// a checked unowned reference cost a reference-count operation per element.
    unowned(unsafe) let reader: FeedReader

    /// The value of the attribute with this local name in this namespace (`.none`: unprefixed).
    ///
    /// Called for several names on every start tag (`xml:base` on each): the name is a static string compared
    /// in place, and the namespace is looked up only for a prefixed attribute, since an unprefixed one is in none.
    func value(namespace: Namespace = .none, name: StaticString) -> String? {
        guard let pointer else { return nil }
        for index in 0..<count {
            let base = index * 5
            guard let localName = pointer[base], Self.equals(localName, name) else { continue }
            let (prefix, uri) = (pointer[base + 1], pointer[base + 2])
            let found = prefix == nil && uri == nil ? .none : reader.namespace(uri: uri, prefix: prefix)
            guard found == namespace else { continue }
            return Self.value(pointer[base + 3], pointer[base + 4])
        }
        return nil
    }

    typealias MediaImage = (
        url: String?, width: String?, height: String?, type: String?, medium: String?, isDefault: String?
    )

    /// The unprefixed attributes of a Media RSS image element, in one pass over the attributes rather than one per
    /// name (a `media:content` asks for six); the first of each name counts, as in ``value(namespace:name:)``.
    func mediaImage() -> MediaImage {
        var found: MediaImage = (nil, nil, nil, nil, nil, nil)
        guard let pointer else { return found }
        for index in 0..<count {
            let base = index * 5
            guard let localName = pointer[base], pointer[base + 1] == nil, pointer[base + 2] == nil else { continue }
            /// The first value of a name counts.
            func take(_ slot: inout String?) {
                if slot == nil { slot = Self.value(pointer[base + 3], pointer[base + 4]) }
            }
            if Self.equals(localName, "url") {
                take(&found.url)
            } else if Self.equals(localName, "width") {
                take(&found.width)
            } else if Self.equals(localName, "height") {
                take(&found.height)
            } else if Self.equals(localName, "type") {
                take(&found.type)
            } else if Self.equals(localName, "medium") {
                take(&found.medium)
            } else if Self.equals(localName, "isDefault") {
                take(&found.isDefault)
            }
        }
        return found
    }

    /// Every attribute as (qualified name, value).
    func all() -> [(String, String)] {
        guard let pointer else { return [] }
        var result: [(String, String)] = []
        for index in 0..<count {
            let base = index * 5
            guard let localName = pointer[base] else { continue }
            var name = String(cString: localName)
            if let prefix = pointer[base + 1] { name = String(cString: prefix) + ":" + name }
            result.append((name, Self.value(pointer[base + 3], pointer[base + 4]) ?? ""))
        }
        return result
    }

    private static func equals(_ pointer: UnsafePointer<xmlChar>, _ name: StaticString) -> Bool {
        let count = name.utf8CodeUnitCount
        let expected = name.utf8Start
        for index in 0..<count where pointer[index] != expected[index] { return false }
        return pointer[count] == 0
    }

    private static func value(_ start: UnsafePointer<xmlChar>?, _ end: UnsafePointer<xmlChar>?) -> String? {
        guard let start, let end else { return nil }
        let bytes = UnsafeBufferPointer(start: start, count: end - start)
        // Without entity substitution libxml2 hands "&" in attribute values over as "&#38;".
        guard memchr(start, Int32(UInt8(ascii: "&")), bytes.count) != nil else {
            return String(decoding: bytes, as: UTF8.self)
        }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "&"), index + 4 < bytes.count, bytes[index + 1] == UInt8(ascii: "#"),
                bytes[index + 2] == UInt8(ascii: "3"), bytes[index + 3] == UInt8(ascii: "8"),
                bytes[index + 4] == UInt8(ascii: ";")
            {
                decoded.append(UInt8(ascii: "&"))
                index += 5
            } else {
                decoded.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: decoded, as: UTF8.self)
    }
}
