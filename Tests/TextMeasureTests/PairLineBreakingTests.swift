import FeedLayoutTestSupport
import Testing

@testable import TextMeasure

@Suite("Pair line breaking agrees with ICU")
struct PairLineBreakingTests {
    /// Every BMP code point the pair table covers, by class.
    static let supportedByClass: [PairLineBreaking.PairClass: [UInt16]] = {
        var byClass: [PairLineBreaking.PairClass: [UInt16]] = [:]
        for unit in 0..<0x1_0000 where unit >= 0x20 && !(0x7F...0x9F).contains(unit) {
            let pairClass = PairLineBreaking.classes[unit]
            if pairClass != .unsupported { byClass[pairClass, default: []].append(UInt16(unit)) }
        }
        return byClass
    }()

    static let coveredClasses = supportedByClass.keys.sorted { $0.rawValue < $1.rawValue }

    /// A character for a generated text: ASCII (letters, digits, punctuation, spaces),
    /// a no-break space, or any covered BMP character, each class equally likely.
    static func randomUnit(_ generator: inout SplitMix64) -> UInt16 {
        switch Int.random(in: 0..<10, using: &generator) {
        case 0..<3: return UInt16.random(in: 0x21...0x7E, using: &generator)
        case 3: return 0x20
        case 4: return 0xA0
        default:
            let units = supportedByClass[coveredClasses.randomElement(using: &generator)!]!
            return units.randomElement(using: &generator)!
        }
    }

    static func expectAgreement(_ units: [UInt16], _ breaker: LineBreakOpportunities) {
        let fast = breaker.segments(of: units)
        let icu = breaker.segments(of: units, consultingICUEverywhere: true)
        #expect(fast == icu, "\(units.map { String($0, radix: 16) })")
    }

    @Test func coversTheScriptsOfTheBenchmark() {
        // Cyrillic, Greek, accented Latin, Arabic letters, CJK ideographs, kana and the
        // usual CJK punctuation must not send a text to ICU.
        for text in ["Съешь же ещё", "Η γρήγορη", "café à Über", "غروب الشمس", "夕阳西下，港口。", "「こんにちは」ラーメン！"] {
            #expect(Array(text.utf16).allSatisfy { PairLineBreaking.classes[Int($0)] != .unsupported }, "\(text)")
        }
    }

    @Test func everyCoveredCharacterBetweenRandomNeighbours() {
        // Each covered code point once, between two random characters: a class mapping that
        // ICU tailors for single code points shows up here.
        var generator = SplitMix64(seed: 1)
        let breaker = LineBreakOpportunities()
        var mismatches: [String] = []
        for units in Self.supportedByClass.values {
            for unit in units {
                let text = [
                    Self.randomUnit(&generator), unit, Self.randomUnit(&generator), Self.randomUnit(&generator),
                ]
                if breaker.segments(of: text) != breaker.segments(of: text, consultingICUEverywhere: true) {
                    mismatches.append(Self.describeMismatch(text, breaker))
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) texts, first: \(mismatches.prefix(20))")
    }

    /// Characters the pair table leaves to ICU: combining marks, joiners, Hebrew, Thai,
    /// Hangul, the hyphens `lb=normal` tailors, emoji with modifiers and flags.
    static let unsupportedSamples: [[UInt16]] = [
        "\u{301}", "\u{308}", "\u{200D}", "\u{200B}", "\u{2060}", "\u{FE0F}", "\u{20E3}", "א", "ש", "ก", "ข", "ำ",
        "한", "\u{1100}", "\u{2010}", "\u{2013}", "\u{301C}", "\u{30A0}", "😀", "🏽", "🇫", "🇷", "✌", "𠀋",
    ].map { Array($0.utf16) }

    @Test(arguments: 0..<4)
    func randomTextsWithCharactersLeftToICU(seed: UInt64) {
        // Such a text goes to ICU whole; mixed with everything the pair table covers, the
        // segments must still be ICU's.
        var generator = SplitMix64(seed: 5000 + seed)
        let breaker = LineBreakOpportunities()
        var mismatches: [String] = []
        for _ in 0..<20_000 {
            let length = Int.random(in: 2...14, using: &generator)
            var text: [UInt16] = []
            for _ in 0..<length {
                if Int.random(in: 0..<4, using: &generator) == 0 {
                    text += Self.unsupportedSamples.randomElement(using: &generator)!
                } else {
                    text.append(Self.randomUnit(&generator))
                }
            }
            if breaker.segments(of: text) != breaker.segments(of: text, consultingICUEverywhere: true) {
                mismatches.append(Self.describeMismatch(text, breaker))
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) texts, first: \(mismatches.prefix(20))")
    }

    @Test(arguments: 0..<8)
    func randomTexts(seed: UInt64) {
        // Short texts dense in punctuation, digits and spaces exercise the rules that look
        // past a pair (numbers, spaces after opening punctuation, quotation marks).
        var generator = SplitMix64(seed: 1000 + seed)
        let breaker = LineBreakOpportunities()
        var mismatches: [String] = []
        for _ in 0..<20_000 {
            let length = Int.random(in: 2...12, using: &generator)
            let text = (0..<length).map { _ in Self.randomUnit(&generator) }
            if breaker.segments(of: text) != breaker.segments(of: text, consultingICUEverywhere: true) {
                mismatches.append(Self.describeMismatch(text, breaker))
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) texts, first: \(mismatches.prefix(20))")
    }

    /// Code points beyond the BMP: emoji (ideographic, emoji bases and modifiers, flags' regional indicators),
    /// ideographs of CJK extension B, Linear B and mathematical letters (alphabetic), musical symbols.
    static let supplementaryRanges: [ClosedRange<UInt32>] = [
        0x1F300...0x1F5FF, 0x1F600...0x1F64F, 0x1F680...0x1F6FF, 0x1F900...0x1F9FF, 0x1FA70...0x1FAFF,
        0x1F1E6...0x1F1FF, 0x1F3FB...0x1F3FF, 0x20000...0x2A6DF, 0x10000...0x1007F, 0x1D400...0x1D7FF,
        0x1D100...0x1D1FF, 0x1F000...0x1F0FF,
    ]

    @Test(arguments: 0..<6)
    func randomTextsBeyondTheBMP(seed: UInt64) {
        // A pair's class is its code point's; no break falls inside one. Emoji modifiers and
        // regional indicators still send the text to ICU.
        var generator = SplitMix64(seed: 7000 + seed)
        let breaker = LineBreakOpportunities()
        var mismatches: [String] = []
        var pairTableTexts = 0
        for _ in 0..<20_000 {
            var text: [UInt16] = []
            for _ in 0..<Int.random(in: 2...12, using: &generator) {
                if Int.random(in: 0..<3, using: &generator) == 0 {
                    let range = Self.supplementaryRanges.randomElement(using: &generator)!
                    text += Array(String(Unicode.Scalar(UInt32.random(in: range, using: &generator))!).utf16)
                } else {
                    text.append(Self.randomUnit(&generator))
                }
            }
            let fast = breaker.segments(of: text)
            if fast != breaker.segments(of: text, consultingICUEverywhere: true) {
                mismatches.append(Self.describeMismatch(text, breaker))
            }
            if Self.pairTableCovers(text) { pairTableTexts += 1 }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) texts, first: \(mismatches.prefix(20))")
        #expect(pairTableTexts > 10_000)
    }

    /// Whether every character of a text has a class in the pair table (so ICU is asked only for `needsContext`).
    static func pairTableCovers(_ text: [UInt16]) -> Bool {
        var offset = 0
        while offset < text.count {
            if UTF16.isLeadSurrogate(text[offset]), offset + 1 < text.count {
                if PairLineBreaking.supplementaryClass(lead: text[offset], trail: text[offset + 1]) == .unsupported {
                    return false
                }
                offset += 2
            } else {
                if PairLineBreaking.classes[Int(text[offset])] == .unsupported { return false }
                offset += 1
            }
        }
        return true
    }

    @Test func emojiBetweenWordsUseThePairTable() {
        // The benchmark's captions end their paragraphs with an emoji after a no-break space.
        let breaker = LineBreakOpportunities()
        for text in ["hills\u{A0}🚲 harbour", "老城\u{A0}🍂 晨雾", "Möwen 📷, 🌊!", "𠀋𠀌(𠀍)"] {
            #expect(Self.pairTableCovers(Array(text.utf16)), "\(text)")
            Self.expectAgreement(Array(text.utf16), breaker)
        }
    }

    /// The text, and the classes at the first position where the two disagree.
    static func describeMismatch(_ text: [UInt16], _ breaker: LineBreakOpportunities) -> String {
        let fastEnds = Set(breaker.segments(of: text).map(\.end))
        let icuEnds = Set(breaker.segments(of: text, consultingICUEverywhere: true).map(\.end))
        let position = fastEnds.symmetricDifference(icuEnds).min() ?? 0
        let units = text.map { String($0, radix: 16) }.joined(separator: " ")
        guard position > 0, position < text.count else { return units }
        let before = PairLineBreaking.classes[Int(text[position - 1])]
        let after = PairLineBreaking.classes[Int(text[position])]
        return "\(units) at \(position): \(before) \(after) ICU breaks: \(icuEnds.contains(position))"
    }

    @Test func unsupportedCharactersSendTheTextToICU() {
        // A combining mark changes how the letter before it breaks (LB9), so the whole text
        // goes to ICU; the answer is the same either way.
        let breaker = LineBreakOpportunities()
        for text in ["e\u{301}(x", "Ш\u{200D}(", "a\u{5D0}-b", "1️⃣🇫🇷🇯🇵", "東‐京"] {
            Self.expectAgreement(Array(text.utf16), breaker)
        }
    }
}

@Suite("Segment cache")
struct SegmentCacheTests {
    @Test func findsWhatWasStoredByContent() {
        var cache = SegmentCache<Int>(limit: 100)
        let words: [[UInt16]] = ["a", "ab", "abc", "photographer", "a much longer segment than twelve"].map {
            Array($0.utf16)
        }
        for (index, word) in words.enumerated() {
            word.withUnsafeBufferPointer { cache.insert(index, head: 0, body: $0, tail: 1) }
        }
        for (index, word) in words.enumerated() {
            // A copy of the units, at another address, finds the same entry.
            let copy = Array(word)
            #expect(copy.withUnsafeBufferPointer { cache.value(head: 0, body: $0, tail: 1) } == index)
            // Head and tail are part of the key.
            #expect(copy.withUnsafeBufferPointer { cache.value(head: 1, body: $0, tail: 1) } == nil)
            #expect(copy.withUnsafeBufferPointer { cache.value(head: 0, body: $0, tail: 0) } == nil)
        }
        // A prefix is another key.
        #expect(Array("ph".utf16).withUnsafeBufferPointer { cache.value(head: 0, body: $0, tail: 1) } == nil)
        #expect([UInt16]().withUnsafeBufferPointer { cache.value(head: 0, body: $0, tail: 1) } == nil)
    }

    @Test func neverHoldsMoreThanTwiceItsLimitAndKeepsWhatIsRead() {
        var cache = SegmentCache<Int>(limit: 50)
        let kept: [UInt16] = Array("kept".utf16)
        kept.withUnsafeBufferPointer { cache.insert(-1, head: 0, body: $0, tail: 0) }
        for number in 0..<5_000 {
            let units = Array("word \(number) with some length".utf16)
            units.withUnsafeBufferPointer { cache.insert(number, head: 0, body: $0, tail: 0) }
            #expect(kept.withUnsafeBufferPointer { cache.value(head: 0, body: $0, tail: 0) } == -1)
            #expect(cache.count <= 100)
        }
        #expect(
            Array("word 4999 with some length".utf16).withUnsafeBufferPointer {
                cache.value(head: 0, body: $0, tail: 0)
            } == 4999)
        #expect(
            Array("word 0 with some length".utf16).withUnsafeBufferPointer {
                cache.value(head: 0, body: $0, tail: 0)
            } == nil)
    }
}
