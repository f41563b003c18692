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
        var units: [UInt16] = []
        units.reserveCapacity(text.utf16.count)
        var spacePending = false
        var previousWasCarriageReturn = false
        for scalar in text.unicodeScalars {
            let value = scalar.value
            defer { previousWasCarriageReturn = value == 0x0D }
            if preservingNewlines && (value == 0x0A || value == 0x0D) {
                // CR LF is one newline; spaces on either side of it vanish.
                if value == 0x0A && previousWasCarriageReturn { continue }
                units.append(newline)
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
            if spacePending, let last = units.last, last != newline {
                units.append(space)
            }
            spacePending = false
            if value < 0x1_0000 {
                units.append(UInt16(truncatingIfNeeded: value))
            } else {
                units.append(UTF16.leadSurrogate(scalar))
                units.append(UTF16.trailSurrogate(scalar))
            }
        }
        return units
    }
}
