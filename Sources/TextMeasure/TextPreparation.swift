/// Turns raw text into the text content Blink lays out for `white-space: normal`.
///
/// The rules, from CSS Text 3 as Blink applies them: every run of spaces, tabs, line
/// feeds, carriage returns and form feeds becomes one space; spaces at the start and end
/// of the text and next to a forced line break (U+2028, U+2029) disappear; other C0 and
/// C1 control characters are dropped (Blink gives them no width). Invalid UTF-8 never
/// reaches this point: it was replaced by U+FFFD when the bytes were decoded.
enum TextPreparation {
    static let space: UInt16 = 0x20
    static let softHyphen: UInt16 = 0xAD
    static let lineSeparator: UInt16 = 0x2028
    static let paragraphSeparator: UInt16 = 0x2029

    /// Whether a UTF-16 unit is a forced line break that survives whitespace collapsing.
    static func isForcedBreak(_ unit: UInt16) -> Bool {
        unit == lineSeparator || unit == paragraphSeparator
    }

    /// Whether a UTF-16 unit hangs at the end of a line instead of taking width from it:
    /// the collapsed space, forced breaks, and the breakable "other space separators"
    /// Blink's `ShapingLineBreaker` also treats as trailing spaces.
    static func hangsAtLineEnd(_ unit: UInt16) -> Bool {
        switch unit {
        case space, lineSeparator, paragraphSeparator, 0x1680, 0x2000...0x2006, 0x2008...0x200A, 0x205F, 0x3000:
            return true
        default:
            return false
        }
    }

    /// Collapses whitespace and drops control characters.
    ///
    /// - Parameter text: The text as given.
    /// - Returns: The text content as UTF-16 code units, ready for ICU and HarfBuzz.
    static func collapse(_ text: String) -> [UInt16] {
        var units: [UInt16] = []
        units.reserveCapacity(text.utf16.count)
        var spacePending = false
        for scalar in text.unicodeScalars {
            let value = scalar.value
            switch value {
            case 0x20, 0x09, 0x0A, 0x0D, 0x0C:
                spacePending = true
                continue
            case 0x00...0x1F, 0x7F...0x9F:
                continue
            default:
                break
            }
            let isBreak = value == 0x2028 || value == 0x2029
            if spacePending, let last = units.last, !isForcedBreak(last), !isBreak {
                units.append(space)
            }
            spacePending = false
            units.append(contentsOf: UTF16.encode(scalar)!)
        }
        return units
    }
}
