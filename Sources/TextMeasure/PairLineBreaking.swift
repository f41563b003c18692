internal import CFeedLayoutShims

/// UAX #14 line-break decisions that depend only on the two characters around a
/// position, for the text ICU's line iterator would otherwise have to walk.
///
/// Running ICU's rule-based iterator over a caption cost more than everything else that
/// measures a warm Cyrillic or Chinese caption. Most of UAX #14 decides a position from
/// the classes of its two neighbours alone; the rules that look further (combining marks,
/// zero-width joiners, regional-indicator pairs, Hebrew-letter hyphens, Korean syllable
/// blocks, number sequences, dictionary-based scripts) are left to ICU: a text holding a
/// character of a class outside ``PairClass`` goes to ICU whole, and a pair that number
/// rules may decide is asked of ICU (`needsContext`). The classes come from ICU's own
/// property data; the rules restate those of ICU 72 with `lb=normal` (CSS
/// `line-break: normal`), and a test compares every decision with ICU's over generated
/// text (`PairLineBreakingTests`).
enum PairLineBreaking {
    /// What the pair table says about a position.
    enum Decision: UInt8, Sendable {
        case breaks, keeps, needsContext
    }

    /// The line-break classes the pair table covers. Open and close parentheses are split
    /// by East Asian width, which rule LB30 looks at.
    enum PairClass: UInt8, CaseIterable, Sendable {
        case unsupported = 0
        case alphabetic, ideographic, numeric
        case openPunctuation, openPunctuationWide, closePunctuation, closeParenthesis, closeParenthesisWide
        case exclamation, infixNumeric, breakSymbols, nonstarter, quotation
        case breakAfter, breakBefore, hyphen, inseparable, glue, breakBoth, prefixNumeric, postfixNumeric
        /// The space and the preserved newline: Blink decides every position next to one,
        /// so they only need to be allowed in a text, never looked up in a pair.
        case space
    }

    /// The class of every BMP code unit (surrogates are `unsupported`: a pair's class is its code point's,
    /// ``supplementaryClass(lead:trail:)``), read from ICU once
    /// per process, when the first text with non-ASCII characters is measured (about half a
    /// millisecond; 64 KB).
    static let classes: [PairClass] = (0..<0x1_0000).map { pairClass(ofCodePoint: UInt32($0)) }

    /// The decision for every pair of classes, indexed `previous * count + next`.
    static let decisions: [Decision] = PairClass.allCases.flatMap { previous in
        PairClass.allCases.map { next in decision(previous, next) }
    }

    /// ICU's ULineBreak values this type reads (fl_icu.c asserts them).
    private enum ICULineBreak: Int32 {
        case unknown = 0, ambiguous = 1, alphabetic = 2, breakBoth = 3, breakAfter = 4, breakBefore = 5
        case closePunctuation = 8, exclamation = 11, glue = 12, hyphen = 13, ideographic = 14, inseparable = 15
        case infixNumeric = 16, nonstarter = 18, numeric = 19, openPunctuation = 20, postfixNumeric = 21
        case prefixNumeric = 22, quotation = 23, space = 26, breakSymbols = 27, closeParenthesis = 36
        case conditionalJapaneseStarter = 37
    }

    /// The class of a code point beyond the BMP (an emoji, a rare ideograph), asked of ICU when a text holds one.
    static func supplementaryClass(lead: UInt16, trail: UInt16) -> PairClass {
        pairClass(ofCodePoint: TextPreparation.codePoint(lead: lead, trail: trail))
    }

    private static func pairClass(ofCodePoint codePoint: UInt32) -> PairClass {
        switch codePoint {
        case 0x0A:
            return .space
        case 0xD800...0xDFFF:
            return .unsupported
        // `lb=normal` lets a line break before these hyphens and wave dashes after CJK
        // text but not after other text: a tailoring the pair table does not restate.
        case 0x2010, 0x2013, 0x301C, 0x30A0:
            return .unsupported
        default:
            break
        }
        let codePointValue = Int32(bitPattern: codePoint)
        guard let lineBreak = ICULineBreak(rawValue: fl_icu_line_break_class(codePointValue)) else {
            return .unsupported
        }
        let isWide = fl_icu_is_east_asian_wide(codePointValue) != 0
        switch lineBreak {
        // LB1: unassigned and ambiguous characters resolve to AL.
        case .unknown, .ambiguous, .alphabetic: return .alphabetic
        // `lb=normal` (CSS `line-break: normal`) treats conditional Japanese starters
        // (small kana, the prolonged sound mark) as ideographs.
        case .ideographic, .conditionalJapaneseStarter: return .ideographic
        case .numeric: return .numeric
        case .openPunctuation: return isWide ? .openPunctuationWide : .openPunctuation
        case .closePunctuation: return .closePunctuation
        case .closeParenthesis: return isWide ? .closeParenthesisWide : .closeParenthesis
        case .exclamation: return .exclamation
        case .infixNumeric: return .infixNumeric
        case .breakSymbols: return .breakSymbols
        case .nonstarter: return .nonstarter
        case .quotation: return .quotation
        case .breakAfter: return .breakAfter
        case .breakBefore: return .breakBefore
        case .hyphen: return .hyphen
        case .inseparable: return .inseparable
        case .glue: return .glue
        case .breakBoth: return .breakBoth
        case .prefixNumeric: return .prefixNumeric
        case .postfixNumeric: return .postfixNumeric
        case .space: return codePoint == 0x20 ? .space : .unsupported
        }
    }

    /// UAX #14's rules for two adjacent characters with no space between them, in the
    /// order UAX #14 applies them.
    private static func decision(_ previous: PairClass, _ next: PairClass) -> Decision {
        if previous == .unsupported || next == .unsupported || previous == .space || next == .space {
            return .needsContext
        }
        let closing: Set<PairClass> = [.closePunctuation, .closeParenthesis, .closeParenthesisWide]
        let opening: Set<PairClass> = [.openPunctuation, .openPunctuationWide]
        let affixes: Set<PairClass> = [.prefixNumeric, .postfixNumeric]
        // LB12, LB12a: no break after a glue character, nor before one except after a
        // space, BA or HY.
        if previous == .glue { return .keeps }
        if next == .glue && previous != .breakAfter && previous != .hyphen { return .keeps }
        // LB13: no break before closing punctuation, "!", infix separators and "/".
        if closing.contains(next) || [.exclamation, .infixNumeric, .breakSymbols].contains(next) { return .keeps }
        // LB14: no break after opening punctuation.
        if opening.contains(previous) { return .keeps }
        // LB16, LB17 with no spaces between: CL/CP × NS, B2 × B2.
        if closing.contains(previous) && next == .nonstarter { return .keeps }
        if previous == .breakBoth && next == .breakBoth { return .keeps }
        // LB19: quotation marks glue to both sides.
        if previous == .quotation || next == .quotation { return .keeps }
        // LB21: no break before BA, HY, NS, nor after BB.
        if [.breakAfter, .hyphen, .nonstarter].contains(next) || previous == .breakBefore { return .keeps }
        // LB22: no break before an inseparable character.
        if next == .inseparable { return .keeps }
        // LB23, LB23a, LB24: letters and digits, ideographs and numeric affixes.
        if (previous == .alphabetic && next == .numeric) || (previous == .numeric && next == .alphabetic) {
            return .keeps
        }
        if (previous == .prefixNumeric && next == .ideographic) || (previous == .ideographic && next == .postfixNumeric)
        {
            return .keeps
        }
        if (affixes.contains(previous) && next == .alphabetic) || (previous == .alphabetic && affixes.contains(next)) {
            return .keeps
        }
        // LB25: number sequences; ICU matches them over whole sequences ("1/₹" keeps the
        // rupee sign, "a/₹" does not), so ask it about anything next to a numeric affix.
        if affixes.contains(previous) || affixes.contains(next) { return .needsContext }
        if [.hyphen, .infixNumeric, .breakSymbols, .numeric].contains(previous) && next == .numeric {
            return .needsContext
        }
        // ICU keeps a hyphen that starts a word with the letter after it ("-Æ"), and lets
        // other hyphens break: that depends on what precedes the hyphen.
        if previous == .hyphen { return .needsContext }
        // LB28, LB29: letters together, and after an infix separator.
        if previous == .alphabetic && next == .alphabetic { return .keeps }
        if previous == .infixNumeric && next == .alphabetic { return .keeps }
        // LB30: letters and digits against narrow parentheses.
        if (previous == .alphabetic || previous == .numeric) && next == .openPunctuation { return .keeps }
        if previous == .closeParenthesis && (next == .alphabetic || next == .numeric) { return .keeps }
        // LB31: break everywhere else.
        return .breaks
    }
}
