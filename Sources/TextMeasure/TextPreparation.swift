/// Turns raw text into the text content Blink lays out for `white-space: normal` or
/// `pre-line`.
///
/// The rules, from CSS Text 3 as Blink applies them: every run of spaces, tabs, line
/// feeds, carriage returns and form feeds becomes one space, and spaces at the start and
/// end of the text disappear. Under `pre-line` a newline (CR LF, CR or LF, as the HTML
/// parser normalises them) stays, as a forced break, and the spaces around it disappear.
/// Other C0 and C1 control characters are dropped (Blink gives them no width). Invalid
/// UTF-8 never reaches this point: it was replaced by U+FFFD when the bytes were decoded.
enum TextPreparation {
    static let space: UInt16 = 0x20
    static let newline: UInt16 = 0x0A
    static let softHyphen: UInt16 = 0xAD

    /// Whether a UTF-16 unit hangs at the end of a line instead of taking width from it:
    /// the collapsed space, a preserved newline, and the breakable "other space
    /// separators" Blink's `ShapingLineBreaker` also treats as trailing spaces.
    static func hangsAtLineEnd(_ unit: UInt16) -> Bool {
        switch unit {
        case space, newline, 0x1680, 0x2000...0x2006, 0x2008...0x200A, 0x205F, 0x3000:
            return true
        default:
            return false
        }
    }

    /// Collapses whitespace and drops control characters.
    ///
    /// - Parameters:
    ///   - text: The text as given.
    ///   - preservingNewlines: `pre-line`: keep newlines as forced breaks.
    /// - Returns: The text content as UTF-16 code units, ready for ICU and HarfBuzz.
    static func collapse(_ text: String, preservingNewlines: Bool = false) -> [UInt16] {
        var text = text
        // Native strings are contiguous UTF-8; decoding it by hand into a buffer of the
        // right size costs a fraction of iterating `unicodeScalars` and appending.
        return text.withUTF8 { bytes in
            // A scalar never takes more UTF-16 units than UTF-8 bytes.
            [UInt16](unsafeUninitializedCapacity: bytes.count) { units, written in
                written = collapse(utf8: bytes, into: units, preservingNewlines: preservingNewlines)
            }
        }
    }

    /// Collapses valid UTF-8 into `units`, which has room for `utf8.count` units, and
    /// returns how many it wrote.
    private static func collapse(
        utf8 bytes: UnsafeBufferPointer<UInt8>, into units: UnsafeMutableBufferPointer<UInt16>, preservingNewlines: Bool
    ) -> Int {
        var count = 0
        var spacePending = false
        var previousWasCarriageReturn = false
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte > 0x20 && byte < 0x7F {
                // Printable ASCII, most of most captions: what the general path below does
                // for it, without decoding.
                if spacePending && count > 0 && units[count - 1] != newline {
                    units[count] = space
                    count += 1
                }
                spacePending = false
                previousWasCarriageReturn = false
                units[count] = UInt16(byte)
                count += 1
                index += 1
                continue
            }
            // Decode one scalar (the String guarantees valid UTF-8).
            let lead = UInt32(byte)
            var value: UInt32
            if lead < 0x80 {
                value = lead
                index += 1
            } else if lead < 0xE0 {
                value = (lead & 0x1F) << 6 | UInt32(bytes[index + 1] & 0x3F)
                index += 2
            } else if lead < 0xF0 {
                value = (lead & 0x0F) << 12 | UInt32(bytes[index + 1] & 0x3F) << 6 | UInt32(bytes[index + 2] & 0x3F)
                index += 3
            } else {
                value =
                    (lead & 0x07) << 18 | UInt32(bytes[index + 1] & 0x3F) << 12 | UInt32(bytes[index + 2] & 0x3F) << 6
                    | UInt32(bytes[index + 3] & 0x3F)
                index += 4
            }
            let isCarriageReturn = value == 0x0D
            defer { previousWasCarriageReturn = isCarriageReturn }
            if preservingNewlines && (value == 0x0A || value == 0x0D) {
                // CR LF is one newline; spaces on either side of it vanish.
                if value == 0x0A && previousWasCarriageReturn { continue }
                units[count] = newline
                count += 1
                spacePending = false
                continue
            }
            switch value {
            case 0x20, 0x09, 0x0A, 0x0D, 0x0C:
                spacePending = true
                continue
            case 0x00...0x1F, 0x7F...0x9F:
                continue
            default:
                break
            }
            if spacePending, count > 0, units[count - 1] != newline {
                units[count] = space
                count += 1
            }
            spacePending = false
            if value < 0x1_0000 {
                units[count] = UInt16(truncatingIfNeeded: value)
                count += 1
            } else {
                let offset = value - 0x1_0000
                units[count] = UInt16(truncatingIfNeeded: 0xD800 + (offset >> 10))
                units[count + 1] = UInt16(truncatingIfNeeded: 0xDC00 + (offset & 0x3FF))
                count += 2
            }
        }
        return count
    }

    /// The code point a surrogate pair encodes.
    static func codePoint(lead: UInt16, trail: UInt16) -> UInt32 {
        0x10000 + (UInt32(lead - 0xD800) << 10) + UInt32(trail - 0xDC00)
    }

    /// Calls `body` with the offset and value of each scalar of `units`, in order, until it returns false. A lone
    /// surrogate is U+FFFD, one unit wide, as `String(decoding:as:)` makes it; no `String` is built.
    static func forEachScalar(in units: UnsafeBufferPointer<UInt16>, _ body: (_ offset: Int, _ value: UInt32) -> Bool) {
        var offset = 0
        while offset < units.count {
            let unit = units[offset]
            if UTF16.isLeadSurrogate(unit), offset + 1 < units.count, UTF16.isTrailSurrogate(units[offset + 1]) {
                guard body(offset, codePoint(lead: unit, trail: units[offset + 1])) else { return }
                offset += 2
            } else {
                guard body(offset, UTF16.isLeadSurrogate(unit) || UTF16.isTrailSurrogate(unit) ? 0xFFFD : UInt32(unit))
                else { return }
                offset += 1
            }
        }
    }

    /// The text a reader sees: soft hyphens that were not broken at are invisible.
    static func visibleText(_ units: UnsafeBufferPointer<UInt16>, _ range: Range<Int>) -> String {
        let slice = UnsafeBufferPointer(rebasing: units[range])
        // The standard library's generic UTF-16 decoding is slow for non-ASCII text and
        // this runs once per line; transcode by hand (lone surrogates become U+FFFD, as
        // `String(decoding:as:)` makes them).
        return String(unsafeUninitializedCapacity: slice.count * 3) { utf8 in
            var written = 0
            func put(_ byte: UInt32) {
                utf8[written] = UInt8(truncatingIfNeeded: byte)
                written += 1
            }
            var index = 0
            while index < slice.count {
                let unit = slice[index]
                index += 1
                var value = UInt32(unit)
                if unit == softHyphen { continue }
                if UTF16.isLeadSurrogate(unit), index < slice.count, UTF16.isTrailSurrogate(slice[index]) {
                    value = 0x1_0000 + ((value - 0xD800) << 10) + (UInt32(slice[index]) - 0xDC00)
                    index += 1
                } else if UTF16.isLeadSurrogate(unit) || UTF16.isTrailSurrogate(unit) {
                    value = 0xFFFD
                }
                switch value {
                case 0..<0x80:
                    put(value)
                case 0x80..<0x800:
                    put(0xC0 | value >> 6)
                    put(0x80 | value & 0x3F)
                case 0x800..<0x1_0000:
                    put(0xE0 | value >> 12)
                    put(0x80 | value >> 6 & 0x3F)
                    put(0x80 | value & 0x3F)
                default:
                    put(0xF0 | value >> 18)
                    put(0x80 | value >> 12 & 0x3F)
                    put(0x80 | value >> 6 & 0x3F)
                    put(0x80 | value & 0x3F)
                }
            }
            return written
        }
    }
}
