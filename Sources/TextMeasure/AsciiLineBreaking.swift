/// Blink's line-break rules between two printable ASCII characters.
///
/// Blink (`kAsciiLineBreakTable` in `text_break_iterator.cc`) deliberately departs from
/// UAX #14 here, for compatibility with older browsers: it breaks before an opening
/// bracket after certain punctuation, after "-" and after "?", and nowhere else — not
/// after "/" or "." inside URLs, for example. This type restates those rules as sets.
struct AsciiLineBreaking: Sendable {
    /// The opening brackets a line may start with after closing-ish punctuation.
    private let openingBrackets = AsciiSet("(<[{")
    /// Characters after which a line may break before an opening bracket.
    private let breaksBeforeOpeningBracket = AsciiSet("!\"#%&)*+,.:;=>\\]|}~")
    /// What may follow "-" on the next line (digits are decided by context, see below).
    private let afterHyphen: AsciiSet
    /// What may follow "?" on the next line.
    private let afterQuestionMark: AsciiSet
    private let letters = AsciiSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
    private let digits = AsciiSet("0123456789")

    /// The rules, built once: callers hold on to them for a whole text, because reading a
    /// static constant costs a check that it was initialised, at every character pair.
    static let rules = AsciiLineBreaking()

    private init() {
        afterHyphen = AsciiSet("\"#%&'(*+-<=>@[\\^_`{|~\u{7F}").union(letters)
        afterQuestionMark = AsciiSet("#$%&(*+-<=>@[\\^_`{|~0123456789").union(letters)
    }

    /// Whether Blink breaks between `previous` and `next`, or nil when these rules do not
    /// decide (then ICU does, if either character is outside ASCII).
    ///
    /// - Parameters:
    ///   - beforePrevious: The character before `previous` (0 at the start).
    ///   - previous: The character before the candidate break.
    ///   - next: The character after it.
    @inline(__always)
    func breaksBetween(beforePrevious: UInt16, previous: UInt16, next: UInt16) -> Bool? {
        // "-" before a digit may be a minus sign: break only inside things like
        // "ABCD-1234" or "1234-5678", which occur in long URLs.
        if previous == 0x2D, next < 0x80, digits.contains(UInt8(next)) {
            return beforePrevious < 0x80
                && (letters.contains(UInt8(beforePrevious)) || digits.contains(UInt8(beforePrevious)))
        }
        guard (0x21...0x7F).contains(previous), (0x21...0x7F).contains(next) else { return nil }
        let before = UInt8(previous)
        let after = UInt8(next)
        switch before {
        case 0x2D: return afterHyphen.contains(after)
        case 0x3F: return afterQuestionMark.contains(after)
        default: return breaksBeforeOpeningBracket.contains(before) && openingBrackets.contains(after)
        }
    }
}

/// A set of ASCII characters as a 128-bit mask: these rules are consulted for every pair
/// of ASCII characters, and a bit test costs far less than hashing into a `Set`.
struct AsciiSet: Sendable {
    private var low: UInt64 = 0
    private var high: UInt64 = 0

    init(_ characters: String) {
        for byte in characters.utf8 {
            precondition(byte < 0x80, "AsciiSet holds ASCII only")
            if byte < 64 { low |= 1 << UInt64(byte) } else { high |= 1 << UInt64(byte - 64) }
        }
    }

    func union(_ other: AsciiSet) -> AsciiSet {
        var result = self
        result.low |= other.low
        result.high |= other.high
        return result
    }

    func contains(_ byte: UInt8) -> Bool {
        if byte < 64 { return low & (1 << UInt64(byte)) != 0 }
        if byte < 128 { return high & (1 << UInt64(byte - 64)) != 0 }
        return false
    }
}
