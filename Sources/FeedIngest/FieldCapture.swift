import ByteTools
/// The text being collected for one field. One per reader, reused for every field: its buffer
/// is allocated once (a class and a buffer per captured field showed up in profiles).
struct FieldCapture {
    /// Whether a field is being collected.
    var isActive = false
    private(set) var field: ItemField?
    private(set) var depth = 0
    private(set) var kind = TextKind.plain
    private(set) var limit = 0
    /// The line the element starts on, for warnings about its value.
    private(set) var line: Int?
    /// The text so far: libxml2 delivers text in many small pieces (one per character reference).
    private var collected = GrowableBytes(capacity: 256)
    private(set) var truncated = false

    /// A buffer larger than this is given back when the next field begins (one huge field must
    /// not keep its memory for the rest of the feed).
    private static let keptCapacity = 1 << 16

    /// The text collected, as a new array.
    var bytes: [UInt8] { collected.withUnsafeBufferPointer { Array($0) } }

    /// Calls `body` with the text collected, in place.
    func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        collected.withUnsafeBufferPointer(body)
    }

    /// Starts collecting a field's text.
    mutating func begin(field: ItemField?, depth: Int, kind: TextKind, limit: Int, line: Int?) {
        isActive = true
        self.field = field
        self.depth = depth
        self.kind = kind
        self.limit = limit
        self.line = line
        truncated = false
        if collected.allocated > Self.keptCapacity {
            collected = GrowableBytes(capacity: 256)
        } else {
            collected.removeAll()
        }
    }

    mutating func appendText(_ text: UnsafeBufferPointer<UInt8>) {
        guard kind == .xhtml else {
            append(text)
            return
        }
        // Inline XHTML text was already unescaped by the XML parser; escape it again for the
        // HTML parser that reads the rebuilt markup.
        appendEscaped(text, quotes: false)
    }

    /// Markup nested in a captured field is kept as markup (Atom XHTML, or raw XHTML pasted into an
    /// RSS description), so that the HTML converter sees paragraphs and images.
    ///
    /// A text construct that says it is plain text but holds elements (Atom 0.3's `<title>Example
    /// <b>Atom</b></title>`) is XHTML in fact: its text so far is escaped again and it is read as XHTML, so
    /// that the markup is not shown as characters. Fields kept as written (links, ids, dates) are not.
    mutating func appendStartTag(name: String, attributes: Attributes) {
        if kind == .plain && (field == nil || field!.isDisplayText) {
            let written = bytes
            collected.removeAll()
            kind = .xhtml
            written.withUnsafeBufferPointer { appendText($0) }
        }
        // Written piece by piece into the capture: the truncation at `limit` is the same as for the whole tag at once,
        // and no String is built per tag (a scalar-by-scalar String was a tenth of ingesting Atom's xhtml content).
        append("<")
        appendUTF8(name)
        for (attributeName, value) in attributes.all() {
            append(" ")
            appendUTF8(attributeName)
            append("=\"")
            var value = value
            value.withUTF8 { appendEscaped($0, quotes: true) }
            append("\"")
        }
        append(">")
    }

    mutating func appendEndTag(name: String) {
        append("</")
        appendUTF8(name)
        append(">")
    }

    /// `text` with `<` and `&` (and `"`, for an attribute value) written as references: all three are ASCII, so
    /// the UTF-8 bytes around them are copied in runs.
    private mutating func appendEscaped(_ text: UnsafeBufferPointer<UInt8>, quotes: Bool) {
        var runStart = 0
        for index in text.indices {
            let reference: StaticString
            switch text[index] {
            case UInt8(ascii: "<"): reference = "&lt;"
            case UInt8(ascii: "&"): reference = "&amp;"
            case UInt8(ascii: "\"") where quotes: reference = "&quot;"
            default: continue
            }
            append(UnsafeBufferPointer(rebasing: text[runStart..<index]))
            append(reference)
            runStart = index + 1
        }
        append(UnsafeBufferPointer(rebasing: text[runStart...]))
    }

    private mutating func appendUTF8(_ text: String) {
        var text = text
        text.withUTF8 { append($0) }
    }

    private mutating func append(_ text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    private mutating func append(_ text: UnsafeBufferPointer<UInt8>) {
        let room = max(0, limit - collected.count)
        let taken = min(text.count, room)
        if taken < text.count { truncated = true }
        guard taken > 0 else { return }
        collected.append(contentsOf: UnsafeBufferPointer(rebasing: text[..<taken]))
    }
}
