import ByteTools
internal import CLibXML2

/// Repairs the byte stream before libxml2 sees it, chunk by chunk, in one pass.
///
/// libxml2 in recovery mode still drops whole words for the commonest feed mistakes, so for
/// feeds that are (or claim to be) UTF-8, ISO-8859-1 or windows-1252 this pass produces clean
/// UTF-8 first:
/// - bytes that are not valid UTF-8 are decoded as windows-1252 (what browsers do with such
///   feeds), and in ISO-8859-1 / windows-1252 feeds every byte is (C1 bytes as windows-1252);
/// - control characters XML 1.0 forbids are dropped (vertical tab and form feed become spaces);
/// - a bare `&` (not starting a character or entity reference) becomes `&#38;`, so "AT&T" and
///   "?a=1&b=2" survive, in text and in attribute values;
/// - HTML named entities (`&nbsp;`, `&eacute;`), which feeds use without declaring, become
///   their characters; the five XML entities become their characters in a text section (below)
///   and character references elsewhere (see `predefinedReference`); other names are kept as
///   text unless the document declares entities itself;
/// - attribute values longer than a megabyte are cut (libxml2 would halt on the tag);
/// - CDATA sections pass through untouched (an `&` there is literal), split every megabyte;
///   comments lose their content (nothing reads it);
/// - text inside the root element that escapes markup (`&lt;p&gt;`, Flickr's and most feeds' HTML
///   captions) goes to libxml2 as a CDATA section with those references decoded, and so does text
///   from its first non-ASCII character on: the same characters, which libxml2 reads as one block
///   instead of a callback per reference and a character-by-character look at the text around
///   them (see `openTextSection`).
///
/// Lines are never added or removed, so libxml2's line numbers stay those of the input; columns
/// after a repair on the same line shift by the repair's length.
struct InputSanitizer {
    /// How bytes at or above 0x80 are read.
    enum Decoding {
        /// UTF-8, with invalid sequences read as windows-1252.
        case utf8
        /// Every byte is windows-1252 (declared ISO-8859-1, Latin-1, US-ASCII or windows-1252).
        case windows1252
    }

    let decoding: Decoding
    private var inCDATA = false
    private var inComment = false
    /// Where the bytes are, as far as tags go: tracked only to cap attribute values.
    private enum Markup: Equatable {
        case content
        case tag
        case attributeValue(quote: UInt8)
    }
    private var markup = Markup.content
    /// Output offset where the current attribute value began, and whether it was already cut.
    private var attributeValueStart = 0
    private var attributeValueCut = false
    /// The longest attribute value kept: libxml2's push parser halts ("Huge input lookup") on a
    /// start tag over 10 MB, losing every later item; a megabyte is far beyond any real URL.
    static let maximumAttributeValueLength = 1 << 20
    /// Output offset where the current CDATA section's content began.
    private var cdataSectionStart = 0
    /// How much CDATA content goes into one section before it is split.
    static let cdataSplitLength = 1 << 20
    static let cdataSplit: [UInt8] = Array("]]><![CDATA[".utf8)
    /// Whether the document declares entities of its own (then unknown names are its business).
    private var declaresEntities = false
    /// Whether a start tag has been seen: text with escaped markup becomes CDATA only inside the root (before
    /// it, in a DOCTYPE's internal subset, a CDATA section would be an error).
    private var rootStarted = false
    /// Whether a CDATA section this pass opened around escaped text is open, and the output offset where its
    /// content began (it is split every megabyte, as CDATA from the input is).
    private var inTextSection = false
    private var textSectionStart = 0
    /// How many `<` and `>` bytes of those sections' markers were written since the last repair: they open or
    /// close no tag, so they do not keep repairs from sharing a record (see `record`).
    private var markerBracketsSinceRepair = 0
    /// Input bytes consumed so far.
    private(set) var inputOffset = 0
    /// Output bytes produced so far (the parser's byte offsets), before the current call's.
    private var outputOffset = 0
    /// Where the current call's output began in its `output` array.
    private var chunkOutputStart = 0
    /// 1-based input line of the byte being looked at, and where that line starts.
    private var line = 1
    private var lineStartOffset = 0
    /// Repairs made since the caller last drained them, in input order.
    var repairs: [Repair] = []
    /// Where in this call's output the last repair was recorded (to extend it; see `record`).
    private var lastRepairOutputIndex: Int?

    /// One change to the input, located both in the input (for people) and in the output (to
    /// find the item the parser is in when it gets there).
    struct Repair: Equatable {
        enum Kind: Equatable {
            case invalidUTF8, controlCharacter, bareAmpersand, attributeValueCut
        }
        var kind: Kind
        /// Offset in the sanitised output, comparable with libxml2's `xmlByteConsumed`.
        var outputOffset: Int
        var line: Int
        /// 1-based byte column in the input line.
        var column: Int
        /// How many repairs of this kind, with no markup between them, this record stands for (see
        /// `InputSanitizer.record`): a megabyte of NULs is one record, not a million.
        var count = 1
    }

    init(decoding: Decoding) {
        self.decoding = decoding
    }

    /// Sanitises as much of `input` as can be decided now.
    /// - Parameters:
    ///   - input: the bytes (the previous call's unconsumed tail first, then new bytes).
    ///   - isFinal: true when no more bytes will come, so nothing may be held back.
    ///   - output: receives clean UTF-8.
    /// - Returns: how many bytes of `input` were consumed; the rest (at most a few dozen bytes:
    ///   a split UTF-8 sequence, entity reference or CDATA marker) must be passed again.
    mutating func process(_ input: UnsafeBufferPointer<UInt8>, isFinal: Bool, output: GrowableBytes) -> Int {
        let count = input.count
        chunkOutputStart = output.count
        // The caller takes this call's repairs away: the next call starts a new record.
        lastRepairOutputIndex = nil
        markerBracketsSinceRepair = 0
        defer { outputOffset += output.count - chunkOutputStart }
        var index = 0
        while index < count {
            guard let next = step(input, at: index, isFinal: isFinal, output: output) else { break }
            index = next
        }
        // The input ends inside text: its section ends with it.
        if isFinal { closeTextSection(output: output) }
        inputOffset += index
        return index
    }

    /// Handles the bytes at `index` as the current mode (comment, CDATA, tag, attribute value,
    /// content) says.
    /// - Returns: the index after the bytes handled, or nil when they may continue in the next chunk.
    @inline(__always)
    private mutating func step(
        _ input: UnsafeBufferPointer<UInt8>, at index: Int, isFinal: Bool, output: GrowableBytes
    ) -> Int? {
        if inComment { return skipComment(input, at: index, isFinal: isFinal, output: output) }
        if inCDATA { splitCDATASectionIfLong(output: output) }
        if markup != .content, let next = copyInsideTag(input, at: index, output: output) { return next }
        if markup == .content {
            if !inCDATA {
                // Markup, the other half of a feed's steps, goes straight to its handling: a content run would
                // stop before it at once.
                if input[index] == UInt8(ascii: "<") {
                    closeTextSection(output: output)
                    return startMarkup(input, at: index, isFinal: isFinal, output: output)
                }
                // So does the markup after a line break (the line ends of a pretty-printed feed), with the break.
                if input[index] == 0x0A && index + 1 < input.count && input[index + 1] == UInt8(ascii: "<") {
                    newLine(at: index)
                    output.append(0x0A)
                    closeTextSection(output: output)
                    return startMarkup(input, at: index + 1, isFinal: isFinal, output: output) ?? index + 1
                }
                if let next = copyContentRun(input, at: index, output: output) { return next }
            }
            // Whatever the run could not take (markup, another reference, a repair) goes as it did before.
            closeTextSection(output: output)
            if Self.isOrdinary(input[index]) {
                // A run of ordinary printable ASCII (and tab / newline / carriage return) is copied in
                // one append.
                let runEnd = endOfOrdinaryRun(input, from: index, to: input.count, stoppingAt: { _ in false })
                output.append(contentsOf: UnsafeBufferPointer(rebasing: input[index..<runEnd]))
                return runEnd
            }
        }
        return repairOrCopyByte(input, at: index, isFinal: isFinal, output: output)
    }

    /// Comments never matter to a feed: their content is dropped (newlines kept, so line numbers
    /// stay true), and a megabyte-long comment cannot trip libxml2's "Huge input lookup" limit.
    @inline(__always)
    private mutating func skipComment(
        _ input: UnsafeBufferPointer<UInt8>, at index: Int, isFinal: Bool, output: GrowableBytes
    ) -> Int? {
        let byte = input[index]
        if byte == UInt8(ascii: "-") {
            if input.count - index < 3 && !isFinal { return nil }
            if input.count - index >= 3 && input[index + 1] == UInt8(ascii: "-")
                && input[index + 2] == UInt8(ascii: ">")
            {
                output.append(contentsOf: [0x2D, 0x2D, 0x3E])
                inComment = false
                return index + 3
            }
        } else if byte == 0x0A {
            newLine(at: index)
            output.append(byte)
        }
        return index + 1
    }

    /// libxml2's push parser does not release a CDATA section's input until it ends and halts
    /// ("Huge input lookup") past 10 MB; closing and reopening the section every megabyte keeps
    /// the text identical and the parser going.
    @inline(__always)
    private mutating func splitCDATASectionIfLong(output: GrowableBytes) {
        guard currentOutputOffset(output) - cdataSectionStart >= Self.cdataSplitLength else { return }
        output.append(contentsOf: Self.cdataSplit)
        cdataSectionStart = currentOutputOffset(output)
    }

    /// Inside a tag: quotes open and close attribute values, `>` ends the tag, runs of ordinary
    /// bytes are copied in one append.
    /// - Returns: the index after the bytes handled, or nil when the byte at `index` needs the
    ///   general handling (a reference, a control character, non-ASCII, or a `<` that ends an
    ///   unclosed tag).
    @inline(__always)
    private mutating func copyInsideTag(
        _ input: UnsafeBufferPointer<UInt8>, at index: Int, output: GrowableBytes
    ) -> Int? {
        let byte = input[index]
        if byte == UInt8(ascii: "<") {
            markup = .content  // an unclosed tag: libxml2 gives up on it here as well
            return nil
        }
        if case .attributeValue(let quote) = markup {
            return copyAttributeValue(input, at: index, quote: quote, output: output)
        }
        if byte == UInt8(ascii: ">") {
            output.append(byte)
            markup = .content
            return index + 1
        }
        if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
            output.append(byte)
            openAttributeValue(quote: byte, output: output)
            return index + 1
        }
        return copyTagRun(input, from: index, runningFrom: index, output: output)
    }

    /// Copies a run of a tag's ordinary bytes that starts at `runStart`, together with the bytes from `start` before
    /// it (a tag's `<`), and with the `>` or quote that ends it: a name with its `>` ("title>", "/item>") or with the
    /// quote that opens its value (` url="`) goes in one step and one append rather than two, a feed being mostly
    /// short tags.
    /// - Returns: as ``copyInsideTag(_:at:output:)``; nil only when there is nothing to copy.
    @inline(__always)
    private mutating func copyTagRun(
        _ input: UnsafeBufferPointer<UInt8>, from start: Int, runningFrom runStart: Int, output: GrowableBytes
    ) -> Int? {
        // Eight bytes at a time while none is a stop or needs a look of its own (a long name such as
        // `media:content url=`), then byte by byte.
        let wordsEnd = Self.endOfTagWords(input, from: runStart, to: input.count)
        let runEnd = endOfOrdinaryRun(
            input, from: wordsEnd, to: input.count,
            stoppingAt: { $0 == UInt8(ascii: ">") || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "'") })
        guard runEnd > start else { return nil }
        // The run ends at a stop, or at a byte the general handling takes (then it is copied without it).
        if runEnd < input.count, case let next = input[runEnd],
            next == UInt8(ascii: ">") || next == UInt8(ascii: "\"") || next == UInt8(ascii: "'")
        {
            output.append(contentsOf: UnsafeBufferPointer(rebasing: input[start...runEnd]))
            if next == UInt8(ascii: ">") { markup = .content } else { openAttributeValue(quote: next, output: output) }
            return runEnd + 1
        }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: input[start..<runEnd]))
        return runEnd
    }

    /// The end of the whole words from `start` whose bytes are all ordinary (see `isOrdinary`), none a line break,
    /// and none a stop of a tag run (`>` and the quotes): the first byte that is not, or the last whole word's end.
    @inline(__always)
    private static func endOfTagWords(_ input: UnsafeBufferPointer<UInt8>, from start: Int, to limit: Int) -> Int {
        ByteWord.endOfUnmarkedWords(UnsafeRawPointer(input.baseAddress!), from: start, to: limit) {
            nonPlainBytes($0) | ByteWord.bytes(equalTo: 0x5D, in: $0) | ByteWord.bytes(equalTo: 0x2D, in: $0)
                | ByteWord.bytes(equalTo: 0x3E, in: $0) | ByteWord.bytes(equalTo: 0x22, in: $0)
                | ByteWord.bytes(equalTo: 0x27, in: $0)
        }
    }

    /// An attribute value starts after its opening quote (already written).
    @inline(__always)
    private mutating func openAttributeValue(quote: UInt8, output: GrowableBytes) {
        markup = .attributeValue(quote: quote)
        attributeValueStart = currentOutputOffset(output)
        attributeValueCut = false
    }

    /// Inside an attribute value: copied up to its closing quote, cut at
    /// `maximumAttributeValueLength` (newlines kept).
    /// - Returns: as ``copyInsideTag(_:at:output:)``.
    @inline(__always)
    private mutating func copyAttributeValue(
        _ input: UnsafeBufferPointer<UInt8>, at index: Int, quote: UInt8, output: GrowableBytes
    ) -> Int? {
        let byte = input[index]
        if byte == quote {
            output.append(byte)
            markup = .tag
            return index + 1
        }
        let valueLength = currentOutputOffset(output) - attributeValueStart
        if valueLength >= Self.maximumAttributeValueLength {
            if !attributeValueCut {
                attributeValueCut = true
                record(.attributeValueCut, at: index, output: output)
            }
            if byte == 0x0A {
                newLine(at: index)
                output.append(byte)  // keeps line numbers
            }
            return index + 1
        }
        // The run stops at the cap exactly, so the cut does not depend on chunking.
        let runLimit = min(input.count, index + Self.maximumAttributeValueLength - valueLength)
        // URLs and sizes go eight bytes at a time while no byte is the quote or needs a look of its own.
        let wordsEnd = Self.endOfPlainTextWords(input, from: index, to: runLimit, excluding: quote)
        let runEnd = endOfOrdinaryRun(input, from: wordsEnd, to: runLimit, stoppingAt: { $0 == quote })
        guard runEnd > index else { return nil }
        // The value with its closing quote in one append, as with a name and its `>`.
        if runEnd < input.count && input[runEnd] == quote {
            output.append(contentsOf: UnsafeBufferPointer(rebasing: input[index...runEnd]))
            markup = .tag
            return runEnd + 1
        }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: input[index..<runEnd]))
        return runEnd
    }

    /// The end of the run of ordinary bytes (see `isOrdinary`) from `start`, before `limit` and
    /// before the first byte `isStop` accepts, counting the newlines it passes.
    @inline(__always)
    private mutating func endOfOrdinaryRun(
        _ input: UnsafeBufferPointer<UInt8>, from start: Int, to limit: Int, stoppingAt isStop: (UInt8) -> Bool
    ) -> Int {
        var end = start
        while end < limit, Self.isOrdinary(input[end]), !isStop(input[end]) {
            if input[end] == 0x0A { newLine(at: end) }
            end += 1
        }
        return end
    }

    /// The fast path in content outside CDATA: a run of printable ASCII (tab, newline, carriage
    /// return, and '-' and ']', which only matter in comments and CDATA) and, when the input is
    /// UTF-8, complete, valid UTF-8 sequences is copied in one append. Text in any script stays
    /// on this path.
    /// - Returns: the index after the run, or nil when there was none at `index`.
    @inline(__always)
    private mutating func copyContentRun(
        _ input: UnsafeBufferPointer<UInt8>, at start: Int, output: GrowableBytes
    ) -> Int? {
        if inTextSection { splitTextSectionIfLong(output: output) }
        let count = input.count
        var index = start
        var runEnd = index
        var rewroteReference = false
        let base = UnsafeRawPointer(input.baseAddress!)
        while runEnd < count {
            // Eight bytes at a time while they are plain text (most of a feed's bytes); in a text section a `]`
            // needs a look of its own.
            let bracketStops = inTextSection
            runEnd = ByteWord.endOfUnmarkedWords(base, from: runEnd, to: count) {
                Self.nonPlainBytes($0) | (bracketStops ? ByteWord.bytes(equalTo: 0x5D, in: $0) : 0)
            }
            guard runEnd < count else { break }
            let next = input[runEnd]
            if next == 0x5D && inTextSection {
                // A `]` ends the section before it: in one, "]]" and a `>` would end it early, and outside, a
                // "]]>" the input spells stays the well-formedness error it was.
                output.append(contentsOf: UnsafeBufferPointer(rebasing: input[index..<runEnd]))
                closeTextSection(output: output)
                index = runEnd
            } else if Self.isOrdinary(next) || next == 0x2D || next == 0x5D {
                if next == 0x0A { newLine(at: runEnd) }
                runEnd += 1
            } else if next >= 0xC2, decoding == .utf8 {
                guard let sequenceEnd = Self.endOfValidUTF8Run(input, from: runEnd) else { break }
                if !inTextSection && rootStarted && !declaresEntities {
                    // Text in other scripts goes into a section from its first non-ASCII character on: libxml2 reads
                    // the rest of a text node after one a character at a time.
                    output.append(contentsOf: UnsafeBufferPointer(rebasing: input[index..<runEnd]))
                    openTextSection(output: output)
                    index = runEnd
                }
                runEnd = sequenceEnd
            } else if next == 0x26, let reference = Self.predefinedReference(base, at: runEnd, count: count) {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: input[index..<runEnd]))
                if rootStarted && !declaresEntities {
                    // Escaped markup in captions is mostly `&lt;`, `&gt;` and `&quot;`: their characters go
                    // into a CDATA section, opened at the first of them.
                    openTextSection(output: output)
                    output.append(reference.character)
                } else {
                    // Outside the root, or where the document declares entities: a character reference
                    // (see `predefinedReference` for why).
                    Self.appendCharacterReference(reference.character, to: output)
                }
                runEnd &+= reference.length
                index = runEnd
                rewroteReference = true
            } else {
                break
            }
        }
        if runEnd > index {
            output.append(contentsOf: UnsafeBufferPointer(rebasing: input[index..<runEnd]))
            return runEnd
        }
        return rewroteReference ? index : nil
    }

    // MARK: Text sections

    private static let textSectionOpening: [UInt8] = Array("<![CDATA[".utf8)
    private static let textSectionClosing: [UInt8] = Array("]]>".utf8)

    /// Opens a CDATA section for escaped text or text in other scripts, unless one is open.
    ///
    /// libxml2 (2.9) hands a predefined reference to the SAX handler as a call of its own, and reads the text
    /// around non-ASCII characters one character at a time; a CDATA section it checks and hands over in one
    /// piece. The characters are the same (XML makes no difference between the two), so is every item.
    @inline(__always)
    private mutating func openTextSection(output: GrowableBytes) {
        guard !inTextSection else { return }
        output.append(contentsOf: Self.textSectionOpening)
        markerBracketsSinceRepair += 1
        inTextSection = true
        textSectionStart = currentOutputOffset(output)
    }

    /// Closes the open text section, if any: before markup, before a `]`, before what the content run does not
    /// take, and at the end of the input. (As no `]` goes into a section, nothing inside one can end it.)
    @inline(__always)
    private mutating func closeTextSection(output: GrowableBytes) {
        guard inTextSection else { return }
        output.append(contentsOf: Self.textSectionClosing)
        markerBracketsSinceRepair += 1
        inTextSection = false
    }

    /// Splits a long text section as a long CDATA section from the input is split (see
    /// `splitCDATASectionIfLong`); a run adds at most one chunk to it before the next look.
    private mutating func splitTextSectionIfLong(output: GrowableBytes) {
        guard currentOutputOffset(output) - textSectionStart >= Self.cdataSplitLength else { return }
        output.append(contentsOf: Self.cdataSplit)
        markerBracketsSinceRepair += 2
        textSectionStart = currentOutputOffset(output)
    }

    /// What the runs leave: line ends and control characters, non-ASCII bytes, and the bytes that
    /// start or end markup (`<`, `&`, `]`, `-`).
    /// - Returns: the index after the bytes handled, or nil when they may continue in the next chunk.
    @inline(__always)
    private mutating func repairOrCopyByte(
        _ input: UnsafeBufferPointer<UInt8>, at index: Int, isFinal: Bool, output: GrowableBytes
    ) -> Int? {
        let byte = input[index]
        switch byte {
        case 0x09, 0x0A, 0x0D:
            output.append(byte)
            return index + 1
        case 0x0B, 0x0C:
            // Vertical tab and form feed separate words; XML forbids them, so a space it is.
            record(.controlCharacter, at: index, output: output)
            output.append(0x20)
            return index + 1
        case ..<0x20:
            record(.controlCharacter, at: index, output: output)
            return index + 1
        case 0x80...:
            return decodeNonASCII(input, at: index, isFinal: isFinal, output: output).map { index + $0 }
        default:
            if inCDATA { return copyCDATAByte(input, at: index, isFinal: isFinal, output: output) }
            if byte == UInt8(ascii: "<") { return startMarkup(input, at: index, isFinal: isFinal, output: output) }
            if byte == UInt8(ascii: "&") {
                return repairReference(input, at: index, isFinal: isFinal, output: output).map { index + $0 }
            }
            output.append(byte)  // ']' or '-' outside CDATA / comments
            return index + 1
        }
    }

    /// A byte inside CDATA: literal, until `]]>` ends the section.
    private mutating func copyCDATAByte(
        _ input: UnsafeBufferPointer<UInt8>, at index: Int, isFinal: Bool, output: GrowableBytes
    ) -> Int? {
        let byte = input[index]
        if byte == UInt8(ascii: "]") {
            let remaining = input.count - index
            if remaining < 3 && !isFinal { return nil }
            if remaining >= 3 && input[index + 1] == UInt8(ascii: "]") && input[index + 2] == UInt8(ascii: ">") {
                output.append(contentsOf: [0x5D, 0x5D, 0x3E])
                inCDATA = false
                return index + 3
            }
        }
        output.append(byte)
        return index + 1
    }

    /// A `<` in content: a CDATA section, a comment, an entity declaration, or a tag.
    private mutating func startMarkup(
        _ input: UnsafeBufferPointer<UInt8>, at index: Int, isFinal: Bool, output: GrowableBytes
    ) -> Int? {
        if input.count - index < 9 && !isFinal { return nil }
        // CDATA sections, declarations and comments start with "<!"; tags, nearly every "<", do not.
        if index + 1 < input.count && input[index + 1] == UInt8(ascii: "!") {
            if Self.matches(input, at: index, "<![CDATA[") {
                output.append(contentsOf: Array("<![CDATA[".utf8))
                inCDATA = true
                cdataSectionStart = currentOutputOffset(output)
                return index + 9
            }
            if Self.matches(input, at: index, "<!ENTITY") { declaresEntities = true }
            if Self.matches(input, at: index, "<!--") {
                output.append(contentsOf: Array("<!--".utf8))
                inComment = true
                return index + 4
            }
        }
        if index + 1 < input.count {
            let next = input[index + 1]
            let startsName =
                (next | 0x20) >= 0x61 && (next | 0x20) <= 0x7A || next == UInt8(ascii: "_")
                || next == UInt8(ascii: ":") || next >= 0x80
            if startsName || next == UInt8(ascii: "/") { markup = .tag }
            if startsName { rootStarted = true }
        }
        guard markup == .tag else {
            output.append(input[index])
            return index + 1
        }
        // The tag's name follows at once, as the next step would take it, copied with its `<`.
        return copyTagRun(input, from: index, runningFrom: index + 1, output: output)!
    }

    private mutating func newLine(at index: Int) {
        line += 1
        lineStartOffset = inputOffset + index + 1
    }

    /// Notes a repair of the input byte at `index`, made where `output` ends now.
    ///
    /// A repair of the same kind as the last one, with no `<` or `>` written since, extends that record
    /// instead: no tag can have opened or closed between them, so the parser passes both inside the same
    /// item, and a caption of a million bare `&` is one record rather than a million.
    private mutating func record(_ kind: Repair.Kind, at index: Int, output: GrowableBytes) {
        if let last = repairs.indices.last, repairs[last].kind == kind, let since = lastRepairOutputIndex,
            output.count(from: since, where: { $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: ">") })
                == markerBracketsSinceRepair
        {
            repairs[last].count += 1
        } else {
            repairs.append(
                Repair(
                    kind: kind, outputOffset: currentOutputOffset(output), line: line,
                    column: inputOffset + index - lineStartOffset + 1))
        }
        lastRepairOutputIndex = output.count
        markerBracketsSinceRepair = 0
    }

    /// The offset in the whole sanitised output where `output` (this call's) ends now.
    @inline(__always)
    private func currentOutputOffset(_ output: GrowableBytes) -> Int {
        outputOffset + output.count - chunkOutputStart
    }

    /// The high bit of the bytes of `word` that are not plain text: plain text is printable ASCII (0x20–0x7F) other
    /// than `&` and `<`, which the content fast path copies as it is, with no newline to count. The lowest bit is
    /// exact, so that a run can go on up to the first of them (see `ByteWord.offset(ofFirst:)`).
    @inline(__always)
    static func nonPlainBytes(_ word: UInt64) -> UInt64 {
        word & ByteWord.highs | ByteWord.bytes(below: 0x20, in: word) | ByteWord.bytes(equalTo: 0x26, in: word)
            | ByteWord.bytes(equalTo: 0x3C, in: word)
    }

    /// The end of the plain text (see `nonPlainBytes`) from `start`, read eight bytes at a time: the first byte
    /// that is not plain text or is `excluded` (the default, `<`, excludes nothing more), or the first of the last
    /// bytes before `limit` too few for a word. The caller looks at the bytes from there one by one.
    @inline(__always)
    static func endOfPlainTextWords(
        _ input: UnsafeBufferPointer<UInt8>, from start: Int, to limit: Int, excluding excluded: UInt8 = 0x3C
    ) -> Int {
        ByteWord.endOfUnmarkedWords(UnsafeRawPointer(input.baseAddress!), from: start, to: limit) {
            nonPlainBytes($0) | ByteWord.bytes(equalTo: excluded, in: $0)
        }
    }

    @inline(__always)
    private static func isOrdinary(_ byte: UInt8) -> Bool {
        (byte >= 0x20 && byte < 0x80 && byte != 0x26 && byte != 0x3C && byte != 0x5D && byte != 0x2D)
            || byte == 0x0A || byte == 0x09 || byte == 0x0D
    }

    /// The length of the complete, valid UTF-8 sequence at `index` (the same rules as
    /// `decodeNonASCII`: no overlong forms, surrogates, values past U+10FFFF or U+FFFE / U+FFFF),
    /// or nil when it is invalid or runs past the end of `input`.
    /// - Parameter rejectingC1: also refuse U+0080–U+009F, which the HTML reader treats as
    ///   windows-1252 mistakes rather than characters.
    @inline(__always)
    static func validSequenceLength(
        _ input: UnsafeBufferPointer<UInt8>, at index: Int, rejectingC1: Bool = false
    ) -> Int? {
        let byte = input[index]
        let length: Int
        let minimum: UInt32
        switch byte {
        case 0xC2...0xDF: (length, minimum) = (2, rejectingC1 ? 0xA0 : 0x80)
        case 0xE0...0xEF: (length, minimum) = (3, 0x800)
        case 0xF0...0xF4: (length, minimum) = (4, 0x10000)
        default: return nil
        }
        guard index + length <= input.count else { return nil }
        var scalar = UInt32(byte) & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07)
        for offset in 1..<length {
            let continuation = input[index + offset]
            guard continuation & 0xC0 == 0x80 else { return nil }
            scalar = scalar << 6 | UInt32(continuation & 0x3F)
        }
        guard scalar >= minimum, !(0xD800...0xDFFF).contains(scalar), scalar <= 0x10FFFF, scalar != 0xFFFE,
            scalar != 0xFFFF
        else { return nil }
        return length
    }

    private static func matches(_ input: UnsafeBufferPointer<UInt8>, at index: Int, _ marker: StaticString) -> Bool {
        let length = marker.utf8CodeUnitCount
        guard index + length <= input.count else { return false }
        let markerBytes = marker.utf8Start
        for offset in 0..<length where input[index + offset] != markerBytes[offset] {
            return false
        }
        return true
    }

    /// Decodes one non-ASCII character: valid UTF-8 as it is, anything else as windows-1252.
    /// - Returns: the bytes consumed, or nil when a UTF-8 sequence may continue in the next chunk.
    private mutating func decodeNonASCII(
        _ input: UnsafeBufferPointer<UInt8>, at index: Int, isFinal: Bool, output: GrowableBytes
    ) -> Int? {
        let byte = input[index]
        if decoding == .utf8 {
            if let length = Self.validSequenceLength(input, at: index) {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: input[index..<index + length]))
                return length
            }
            if !isFinal && Self.mayBeCutOffSequence(input, at: index) { return nil }
            record(.invalidUTF8, at: index, output: output)
        }
        var sink = output
        Self.appendWindows1252(byte, to: &sink)
        return 1
    }

    /// Whether the bytes from `index` to the end of `input` start a UTF-8 sequence that the next
    /// chunk may complete: a lead byte and only continuation bytes after it, too few of them.
    private static func mayBeCutOffSequence(_ input: UnsafeBufferPointer<UInt8>, at index: Int) -> Bool {
        let length: Int
        switch input[index] {
        case 0xC2...0xDF: length = 2
        case 0xE0...0xEF: length = 3
        case 0xF0...0xF4: length = 4
        default: return false
        }
        guard index + length > input.count else { return false }
        for offset in (index + 1)..<input.count where input[offset] & 0xC0 != 0x80 {
            return false
        }
        return true
    }

    /// The end of the run of complete, valid UTF-8 sequences from `start` (a byte at or above 0xC2).
    /// Runs of two- and three-byte sequences whose lead byte rules out every special case
    /// (overlong, surrogate, U+FFFE/U+FFFF: only E0, ED and EF leads can make those) need only
    /// their continuation bytes checked: Cyrillic, Arabic, CJK captions stay in this loop.
    /// - Returns: the end, or nil when the sequence at `start` is invalid or cut off.
    @inline(__always)
    private static func endOfValidUTF8Run(_ input: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        let count = input.count
        var sequenceEnd = start
        while sequenceEnd &+ 3 <= count {
            let lead = input[sequenceEnd]
            if lead >= 0xC2 && lead <= 0xDF && input[sequenceEnd &+ 1] & 0xC0 == 0x80 {
                sequenceEnd &+= 2
            } else if (lead >= 0xE1 && lead <= 0xEC || lead == 0xEE)
                && input[sequenceEnd &+ 1] & 0xC0 == 0x80 && input[sequenceEnd &+ 2] & 0xC0 == 0x80
            {
                sequenceEnd &+= 3
            } else {
                break
            }
        }
        if sequenceEnd > start { return sequenceEnd }
        return validSequenceLength(input, at: start).map { start + $0 }
    }

    /// windows-1252 → UTF-8. 0x80–0x9F map to the printable characters browsers show; the five
    /// unassigned positions keep their C1 code points.
    static func appendWindows1252<Output: ByteAppending>(_ byte: UInt8, to output: inout Output) {
        var scalar = UInt32(byte)
        if byte >= 0x80 && byte <= 0x9F {
            let table: [UInt32] = [
                0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
                0x2039, 0x0152, 0x8D, 0x017D, 0x8F, 0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
                0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
            ]
            scalar = table[Int(byte - 0x80)]
        }
        output.appendUTF8(scalar)
    }

    /// The longest entity name looked for; HTML's longest is 8 characters, 32 leaves room.
    private static let maximumReferenceLength = 32

    /// Handles an `&`: keeps valid references, replaces HTML named entities, escapes bare `&`.
    /// Returns the bytes consumed, or nil when the reference may continue in the next chunk.
    private mutating func repairReference(
        _ input: UnsafeBufferPointer<UInt8>, at index: Int, isFinal: Bool, output: GrowableBytes
    ) -> Int? {
        var end = index + 1
        let limit = min(input.count, index + 1 + Self.maximumReferenceLength)
        let isNumeric = end < input.count && input[end] == UInt8(ascii: "#")
        if isNumeric { end += 1 }
        let nameStart = end
        while end < limit {
            let byte = input[end]
            let isNameByte =
                (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A || (byte >= 0x30 && byte <= 0x39)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":") || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "-")
            guard isNameByte else { break }
            end += 1
        }
        if end == input.count && !isFinal && end < index + 1 + Self.maximumReferenceLength { return nil }
        let terminated = end < input.count && input[end] == UInt8(ascii: ";") && end > nameStart
        guard terminated else {
            Self.appendCharacterReference(UInt8(ascii: "&"), to: output)
            record(.bareAmpersand, at: index, output: output)
            return 1
        }
        if isNumeric {
            // libxml2 checks the number itself ("&#xZZ;" is its error to report). "&#X41;" is XML's
            // error but HTML's "A", as browsers and feedparser read it: the x is lowered.
            for offset in index...end {
                output.append(
                    offset == nameStart && input[offset] == UInt8(ascii: "X") ? UInt8(ascii: "x") : input[offset])
            }
            return end - index + 1
        }
        if let reference = Self.predefinedReference(UnsafeRawPointer(input.baseAddress!), at: index, count: end + 1),
            reference.length == end - index + 1
        {
            Self.appendCharacterReference(reference.character, to: output)
            return reference.length
        }
        let name = UnsafeBufferPointer(rebasing: input[nameStart..<end])
        var nameBytes = Array(name)
        nameBytes.append(0)
        if let entity = htmlEntityLookup(nameBytes) {
            var sink = output
            sink.appendUTF8(UInt32(entity.pointee.value))
            return end - index + 1
        }
        if !declaresEntities {
            // "&bogus;" in a feed without declarations is text that was never escaped; keep it
            // as written, as feedparser does, instead of libxml2 dropping it.
            Self.appendCharacterReference(UInt8(ascii: "&"), to: output)
            record(.bareAmpersand, at: index, output: output)
            for offset in (index + 1)...end { output.append(input[offset]) }
            return end - index + 1
        }
        // An entity the document declares itself: libxml2 decides.
        for offset in index...end { output.append(input[offset]) }
        return end - index + 1
    }

    /// Writes `&#N;` for an ASCII character: how the five XML entities and a bare `&` reach libxml2 outside a
    /// text section.
    @inline(__always)
    private static func appendCharacterReference(_ character: UInt8, to output: GrowableBytes) {
        let target = output.appendUninitialized(character < 100 ? 5 : 6)
        target[0] = UInt8(ascii: "&")
        target[1] = UInt8(ascii: "#")
        var digits = 2
        if character >= 100 {
            target[2] = UInt8(ascii: "0") + character / 100
            digits = 3
        }
        target[digits] = UInt8(ascii: "0") + character / 10 % 10
        target[digits + 1] = UInt8(ascii: "0") + character % 10
        target[digits + 2] = UInt8(ascii: ";")
    }

    /// The predefined entity reference starting at `offset` (an `&`) and ending within `count` bytes: its length
    /// and the character it stands for; nil for anything else (or a reference cut off at `count`).
    ///
    /// Outside a text section the character goes as a character reference: after its first well-formedness error
    /// libxml2 (2.9) silently drops every entity reference in content, even `&amp;`, but still honours character
    /// references; a recovering reader must not lose every "&" after one slip. Compared a word at a time:
    /// Flickr-style captions carry dozens of `&lt;` / `&quot;` per item, and the content fast path calls this at
    /// each `&`.
    @inline(__always)
    private static func predefinedReference(_ base: UnsafeRawPointer, at offset: Int, count: Int)
        -> (length: Int, character: UInt8)?
    {
        guard offset &+ 4 <= count else { return nil }
        let available = count &- offset
        // The first four bytes little-endian: "&lt;", "&gt;", "&amp", "&quo", "&apo".
        switch base.loadUnaligned(fromByteOffset: offset, as: UInt32.self) {
        case 0x3B74_6C26: return (4, UInt8(ascii: "<"))
        case 0x3B74_6726: return (4, UInt8(ascii: ">"))
        case 0x706D_6126 where available >= 5 && base.load(fromByteOffset: offset &+ 4, as: UInt8.self) == 0x3B:
            return (5, UInt8(ascii: "&"))
        case 0x6F75_7126
        where available >= 6 && base.loadUnaligned(fromByteOffset: offset &+ 4, as: UInt16.self) == 0x3B74:
            return (6, UInt8(ascii: "\""))
        case 0x6F70_6126
        where available >= 6 && base.loadUnaligned(fromByteOffset: offset &+ 4, as: UInt16.self) == 0x3B73:
            return (6, UInt8(ascii: "'"))
        default: return nil
        }
    }

}
