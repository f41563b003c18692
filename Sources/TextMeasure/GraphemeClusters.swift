/// Where the grapheme clusters of a piece of UTF-16 text end, as Swift's `String` splits it into `Character`s,
/// without building a `String` for the common case.
///
/// Shaping asks this for every line it measures (to group clusters into font runs) and the ellipsis search for every
/// truncated line (its cuts are cluster boundaries). Most text is letters, digits, punctuation and ideographs, where
/// every code unit is a cluster of its own; `String` iteration costs a transcoding and a table lookup per character
/// for that answer. Here a table marks the BMP code points that always stand alone: grapheme-break property Other or
/// Control (not CR or LF), and no Hangul jamo, Prepend, Extend, SpacingMark or ZWJ. Between two of them every rule of
/// UAX #29 breaks, and no rule looks back across such a pair (the look-behind rules walk back over Extend, ZWJ and
/// regional indicators only), so the text splits there into pieces that `String` handles on its own when they hold
/// anything else. `GraphemeClustersTests` checks the table and the splitting against `String`.
enum GraphemeClusters {
    /// The end offset of each cluster in `units[range]`, in order; the last is `range.upperBound`.
    static func ends(_ units: UnsafeBufferPointer<UInt16>, _ range: Range<Int>) -> [Int] {
        var ends: [Int] = []
        ends.reserveCapacity(range.count)
        var offset = range.lowerBound
        while offset < range.upperBound {
            if standsAlone(units[offset]) && (offset + 1 == range.upperBound || standsAlone(units[offset + 1])) {
                offset += 1
                ends.append(offset)
                continue
            }
            // A piece up to the next pair of lone-standing units (or the end), split by `String`.
            var pieceEnd = offset + 1
            while pieceEnd < range.upperBound && !(standsAlone(units[pieceEnd - 1]) && standsAlone(units[pieceEnd])) {
                pieceEnd += 1
            }
            for cluster in String(decoding: UnsafeBufferPointer(rebasing: units[offset..<pieceEnd]), as: UTF16.self) {
                offset += cluster.utf16.count
                ends.append(offset)
            }
        }
        return ends
    }

    /// Whether a code unit is a BMP code point that is a grapheme cluster on its own between two others like it.
    @inline(__always)
    static func standsAlone(_ unit: UInt16) -> Bool {
        table[Int(unit) >> 6] & (1 << UInt64(unit & 63)) != 0
    }

    /// Ranges of code points that stand alone: whole blocks of letters, digits, punctuation, symbols and
    /// ideographs, cut around every combining mark, Hangul jamo, CR and LF. Conservative: a code point left out
    /// only takes the slower `String` path.
    static let standAloneRanges: [ClosedRange<UInt16>] = [
        0x0000...0x0009, 0x000B...0x000C, 0x000E...0x02FF,  // ASCII, Latin-1, Latin Extended, IPA, modifier letters
        0x0370...0x0482, 0x048A...0x052F,  // Greek, Cyrillic (without the combining Cyrillic marks)
        0x0531...0x0556, 0x0559...0x058A,  // Armenian
        0x05D0...0x05EA, 0x05F0...0x05F4,  // Hebrew letters
        0x0620...0x064A, 0x0660...0x066F,  // Arabic letters and digits
        0x1E00...0x1FFF,  // Latin Extended Additional, Greek Extended
        0x2010...0x2027, 0x2030...0x205E,  // general punctuation
        0x2070...0x20CF,  // superscripts, subscripts, currency signs
        0x2100...0x2BFF,  // letterlike symbols, arrows, mathematical operators, box drawing, dingbats
        0x2E80...0x2FDF,  // CJK radicals
        0x3000...0x3029, 0x3030...0x303F,  // CJK symbols and punctuation (without the tone marks)
        0x3041...0x3096, 0x309B...0x30FF,  // kana (without the combining voicing marks)
        0x3105...0x312F, 0x31F0...0x31FF, 0x3200...0x33FF,
        0x3400...0x4DBF, 0x4E00...0x9FFF,  // CJK ideographs
        0xA000...0xA48F,  // Yi
        0xAC00...0xD7A3,  // Hangul syllables (LV and LVT: two of them never join)
        0xF900...0xFAFF,  // CJK compatibility ideographs
        0xFE10...0xFE19, 0xFE30...0xFE6F,  // vertical, compatibility and small forms
        0xFF01...0xFF9D, 0xFFE0...0xFFEE,  // fullwidth and halfwidth forms (without the halfwidth voicing marks)
    ]

    /// One bit per BMP code point.
    private static let table: [UInt64] = {
        var bits = [UInt64](repeating: 0, count: 65_536 / 64)
        for range in standAloneRanges {
            for unit in range { bits[Int(unit) >> 6] |= 1 << UInt64(unit & 63) }
        }
        return bits
    }()
}
