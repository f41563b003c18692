import ByteTools
internal import CLibXML2

/// How to read a feed, decided once from its first bytes (a kilobyte; up to 64 KiB while no markup has
/// come; or all of a shorter input).
enum FeedInputDetection: Equatable {
    /// A JSON document that starts at `start` (after a BOM or junk).
    case json(start: Int)
    /// An HTML page rather than a feed.
    case htmlPage
    /// Bytes that are no feed at all: the reason says what they are (binary, NUL bytes, plain text).
    case notAFeed(reason: String)
    /// An XML document for libxml2, from `start` (past a UTF-8 BOM and any junk).
    /// - `skippedJunk`: bytes skipped before the XML declaration or root, a BOM not counted.
    case xml(start: Int, skippedJunk: Int, encoding: FeedEncoding)

    /// Looks at a BOM, junk before the root, the XML declaration and the first tag.
    /// - Parameters:
    ///   - head: the first bytes of the input.
    ///   - transportCharset: the charset an HTTP response declared, if any; it counts only when the
    ///     document is silent (a declaration was written with the bytes, a server's default often was not).
    init(head: [UInt8], transportCharset: String?) {
        if let reason = Self.notFeedReason(head) {
            self = .notAFeed(reason: reason)
            return
        }
        var start = 0
        var bomEncoding: String?
        if head.starts(with: [0xEF, 0xBB, 0xBF]) {
            start = 3
            bomEncoding = "utf-8"
        } else if Self.startsLikeUTF16(head) {
            bomEncoding = "utf-16"
        }
        var skippedJunk = 0
        if bomEncoding != "utf-16" {
            // Junk before the root: whitespace, stray text, a second BOM. XML allows none of it
            // before the declaration; a feed reader should not care.
            while start < head.count && head[start] != UInt8(ascii: "<") && head[start] != UInt8(ascii: "{") {
                start += 1
            }
            // An XML declaration after junk (a comment or text an include added first) must
            // still come first for libxml2: start there.
            if let declaration = Self.offset(of: Array("<?xml ".utf8), in: head, from: start), declaration > start {
                start = declaration
            }
            if start < head.count && head[start] == UInt8(ascii: "{") {
                self = .json(start: start)
                return
            }
            if Self.looksLikeHTML(head[start...]) {
                self = .htmlPage
                return
            }
            skippedJunk = start - (bomEncoding == nil ? 0 : 3)
        }
        let documentEncoding = bomEncoding ?? Self.declaredEncoding(head[start...])
        let transportEncoding =
            documentEncoding == nil
            ? transportCharset.map { $0.lowercased() }.flatMap { $0.isEmpty ? nil : $0 } : nil
        let label = documentEncoding ?? transportEncoding ?? "utf-8"
        self = .xml(
            start: start, skippedJunk: skippedJunk, encoding: FeedEncoding(label: label, transport: transportEncoding))
    }

    /// How many first bytes decide the input's kind: a feed's root comes long before, and non-feed
    /// input is refused before more than this is read.
    static let decisionLimit = 64 * 1024

    /// Whether the first bytes cannot tell yet what the input is: no markup start, no control byte below
    /// tab and no file signature so far, and fewer than ``decisionLimit`` bytes.
    static func needsMoreBytes(_ head: [UInt8]) -> Bool {
        guard head.count < decisionLimit, FileSignature(head) == nil else { return false }
        return !head.contains { $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: "{") || $0 < 0x09 }
    }

    /// What the input is when it is clearly not a feed, from its first bytes: a known file signature,
    /// a NUL or other control byte before any markup (UTF-16 aside), or no markup at all in
    /// ``decisionLimit`` bytes.
    private static func notFeedReason(_ head: [UInt8]) -> String? {
        if let signature = FileSignature(head) { return "this is \(signature.description), not a feed" }
        if startsLikeUTF16(head) { return nil }
        let markup = head.firstIndex { $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: "{") } ?? head.count
        // Text before the root is tolerated (junk a server or an include added); control bytes are not text.
        if let control = head[..<markup].firstIndex(where: { $0 < 0x20 && !JSONValue.isWhitespace($0) || $0 == 0x7F }) {
            let what = head[control] == 0 ? "a NUL byte" : "the control byte 0x\(String(head[control], radix: 16, uppercase: true))"
            return "this is binary data, not a feed (\(what) at byte offset \(control), before any XML or JSON)"
        }
        if markup == head.count && !head.isEmpty {
            let isWhitespace = head.allSatisfy { JSONValue.isWhitespace($0) }
            let span = head.count >= decisionLimit ? "its first \(decisionLimit / 1024) KiB" : "its \(head.count) bytes"
            return isWhitespace
                ? "the input holds only whitespace; expected an RSS, Atom or JSON feed"
                : "no XML or JSON in \(span): this is plain text or binary data, not a feed"
        }
        return nil
    }

    /// A UTF-16 byte order mark, or `<` next to a zero byte: text libxml2 decodes, where NUL bytes are
    /// half of every ASCII character.
    private static func startsLikeUTF16(_ head: [UInt8]) -> Bool {
        head.starts(with: [0xFE, 0xFF]) || head.starts(with: [0xFF, 0xFE]) || head.starts(with: [0x00, 0x3C])
            || head.starts(with: [0x3C, 0x00])
    }

    private static func offset(of needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        var index = start
        while index + needle.count <= haystack.count {
            if haystack[index] == needle[0] && Array(haystack[index..<index + needle.count]) == needle { return index }
            index += 1
        }
        return nil
    }

    private static func looksLikeHTML(_ bytes: ArraySlice<UInt8>) -> Bool {
        let head = String(decoding: bytes.prefix(512), as: UTF8.self).lowercased()
        var rest = Substring(head)
        // Skip an XML declaration and comments, then look at the first tag.
        while true {
            rest = rest.drop(while: { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" })
            if rest.hasPrefix("<?"), let end = rest.firstRange(of: "?>") {
                rest = rest[end.upperBound...]
            } else if rest.hasPrefix("<!--"), let end = rest.firstRange(of: "-->") {
                rest = rest[end.upperBound...]
            } else {
                break
            }
        }
        return rest.hasPrefix("<!doctype html") || rest.hasPrefix("<html")
    }

    /// The `encoding` of an XML declaration, lowercased.
    private static func declaredEncoding(_ bytes: ArraySlice<UInt8>) -> String? {
        let head = String(decoding: bytes.prefix(256), as: UTF8.self)
        guard head.hasPrefix("<?xml"), let end = head.firstRange(of: "?>") else { return nil }
        let declaration = head[..<end.lowerBound]
        guard let key = declaration.firstRange(of: "encoding") else { return nil }
        let isSeparator: (Character) -> Bool = { $0 == " " || $0 == "=" || $0 == "\t" }
        var rest: Substring = declaration[key.upperBound...].drop(while: isSeparator)
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return nil }
        rest = rest.dropFirst()
        return String(rest.prefix(while: { $0 != quote })).lowercased()
    }
}

/// Who turns an XML feed's bytes into characters.
enum FeedEncoding: Equatable {
    /// The input sanitizer: UTF-8, Latin-1, windows-1252 and their aliases become clean UTF-8
    /// before libxml2 sees them.
    case sanitized(InputSanitizer.Decoding)
    /// A label libxml2 does not know ("utf8mb4", "UTF-8lies"), which would stop it before the
    /// root: the sanitizer reads the bytes as UTF-8, and the reader says so.
    case unknownReadAsUTF8(label: String)
    /// libxml2 (iconv) decodes it: UTF-16, Shift_JIS, KOI8-R…
    /// - `transportLabel`: an HTTP charset libxml2 must be told, since nothing in the document names it.
    case decodedByLibxml2(transportLabel: String?)

    /// - Parameters:
    ///   - label: the encoding the document (or else the transport) names, lowercased.
    ///   - transport: the transport's charset when the document names none.
    init(label: String, transport: String?) {
        switch label {
        case "utf-8", "utf8":
            self = .sanitized(.utf8)
        case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "us-ascii", "ascii", "windows-1252", "cp1252",
            "iso_8859-1", "x-cp1252":
            self = .sanitized(.windows1252)
        default:
            self =
                Self.libxml2Knows(label)
                ? .decodedByLibxml2(transportLabel: transport) : .unknownReadAsUTF8(label: label)
        }
    }

    /// How the sanitizer decodes bytes at or above 0x80; nil when libxml2 decodes them instead.
    var sanitizerDecoding: InputSanitizer.Decoding? {
        switch self {
        case .sanitized(let decoding): return decoding
        case .unknownReadAsUTF8: return .utf8
        case .decodedByLibxml2: return nil
        }
    }

    private static func libxml2Knows(_ name: String) -> Bool {
        guard let handler = xmlFindCharEncodingHandler(name) else { return false }
        xmlCharEncCloseFunc(handler)
        return true
    }
}

/// A file format recognised by its first bytes, so that a photo, an archive or a program given as the
/// feed is named rather than parsed.
struct FileSignature {
    let description: String

    init?(_ head: [UInt8]) {
        func starts(_ bytes: [UInt8], at offset: Int = 0) -> Bool {
            head.count >= offset + bytes.count && Array(head[offset..<offset + bytes.count]) == bytes
        }
        let ascii = { (text: String) in Array(text.utf8) }
        switch true {
        case starts([0x7F]) && starts(ascii("ELF"), at: 1): description = "an ELF program or library"
        case starts([0x1F, 0x8B]): description = "a gzip-compressed file (decompress it first, e.g. with gunzip)"
        case starts([0x28, 0xB5, 0x2F, 0xFD]): description = "a zstd-compressed file (decompress it first)"
        case starts([0xFD]) && starts(ascii("7zXZ"), at: 1): description = "an xz-compressed file (decompress it first)"
        case starts(ascii("BZh")) && head.count > 3 && (0x31...0x39).contains(head[3]):
            description = "a bzip2-compressed file (decompress it first)"
        case starts(ascii("PK")) && (starts([3, 4], at: 2) || starts([5, 6], at: 2)):
            description = "a ZIP archive"
        case starts([0x89]) && starts(ascii("PNG"), at: 1): description = "a PNG image"
        case starts([0xFF, 0xD8, 0xFF]): description = "a JPEG image"
        case starts(ascii("GIF87a")) || starts(ascii("GIF89a")): description = "a GIF image"
        case starts(ascii("RIFF")) && starts(ascii("WEBP"), at: 8): description = "a WebP image"
        case starts(ascii("%PDF-")): description = "a PDF document"
        case starts(ascii("SQLite format 3")) && starts([0], at: 15): description = "an SQLite database"
        default: return nil
        }
    }
}

extension FeedReader {
    /// Why an input is no feed, judged from its first bytes as the reader judges them before parsing (a file of
    /// another kind, binary data, an HTML page, no markup at all), or `nil` when it may be one.
    ///
    /// A server that receives a feed can answer at once with this, instead of accepting work that will fail.
    /// - Parameter head: The input's first bytes: 64 KiB, or the whole of a shorter input.
    public static func notAFeedReason(firstBytes head: some Collection<UInt8>) -> String? {
        guard !head.isEmpty else { return "the input is empty" }
        switch FeedInputDetection(head: Array(head.prefix(FeedInputDetection.decisionLimit)), transportCharset: nil) {
        case .notAFeed(let reason): return reason
        case .htmlPage: return FeedIngestError.htmlPage(source: "", line: nil, column: nil).message
        case .json, .xml: return nil
        }
    }
}
