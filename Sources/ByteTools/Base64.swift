/// Base64 (RFC 4648), the one codec every part uses: standard (`+/`, section 4) for placeholders' ThumbHashes,
/// URL-safe (`-_`, section 5) for cursors, which travel in URLs and query strings; and a lenient reading for what
/// feeds carry (Atom 0.3 `mode="base64"`).
public enum Base64 {
    public enum Alphabet: Sendable {
        /// `A–Z a–z 0–9 + /`.
        case standard
        /// `A–Z a–z 0–9 - _`.
        case urlSafe

        @usableFromInline var characters: [UInt8] {
            switch self {
            case .standard: Base64.standardCharacters
            case .urlSafe: Base64.urlSafeCharacters
            }
        }
    }

    @usableFromInline static let standardCharacters = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    @usableFromInline static let urlSafeCharacters = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// The text of `bytes`.
    /// - Parameter padded: Whether the last group is filled up with `=` to four characters.
    public static func encode(_ bytes: [UInt8], alphabet: Alphabet, padded: Bool) -> String {
        let characters = alphabet.characters
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            var group: UInt32 = 0
            for position in 0..<count { group |= UInt32(bytes[index + position]) << UInt32(16 - 8 * position) }
            for position in 0...count { output.append(characters[Int((group >> UInt32(18 - 6 * position)) & 63)]) }
            if padded { for _ in count..<3 { output.append(UInt8(ascii: "=")) } }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The bytes of text in exactly one alphabet: no white space, no character of the other alphabet.
    /// - Parameter padded: Whether the text ends its last group with `=` (then its length is a multiple of four);
    ///   without, an `=` anywhere refuses it.
    /// - Returns: `nil` for a character outside the alphabet or padding out of place.
    public static func decode(_ text: some Collection<UInt8>, alphabet: Alphabet, padded: Bool) -> [UInt8]? {
        let values = alphabet == .standard ? standardValues : urlSafeValues
        var output: [UInt8] = []
        output.reserveCapacity(text.count * 3 / 4)
        var group: UInt32 = 0
        var bits = 0
        var padding = 0
        for character in text {
            if padded, character == UInt8(ascii: "=") {
                padding += 1
                continue
            }
            let value = values[Int(character)]
            guard value != invalid, padding == 0 else { return nil }
            group = group << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: group >> UInt32(bits)))
            }
        }
        if padded {
            guard text.count % 4 == 0, padding <= 2 else { return nil }
        }
        return output
    }

    /// The bytes of text as feeds write it: either alphabet, white space (feeds wrap long values) skipped, padding
    /// optional.
    /// - Returns: `nil` when a byte is outside both alphabets or data follows the padding, so that the caller can
    ///   keep the text as written.
    public static func decodeLeniently(_ text: [UInt8]) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(text.count * 3 / 4)
        var group: UInt32 = 0
        var bits = 0
        var sawPadding = false
        for character in text {
            switch character {
            case UInt8(ascii: "="):
                sawPadding = true
                continue
            case 0x20, 0x09, 0x0A, 0x0D: continue
            default: break
            }
            var value = standardValues[Int(character)]
            if value == invalid { value = urlSafeValues[Int(character)] }
            guard value != invalid, !sawPadding else { return nil }
            group = group << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: group >> UInt32(bits)))
            }
        }
        return output
    }

    private static let invalid: UInt8 = 0xFF

    private static func values(of characters: [UInt8]) -> [UInt8] {
        var values = [UInt8](repeating: invalid, count: 256)
        for (value, character) in characters.enumerated() { values[Int(character)] = UInt8(value) }
        return values
    }

    private static let standardValues = values(of: standardCharacters)
    private static let urlSafeValues = values(of: urlSafeCharacters)
}
