/// How tall each line box is.
///
/// Mirrors the CSS `line-height` property: `normal` takes the spacing the fonts ask for
/// (computed exactly as Blink does, fallback fonts included), `pixels` is a length and
/// `multiple` is a unitless number multiplied by the font size.
public enum LineHeight: Sendable, Hashable {
    /// CSS `line-height: normal`: the font's own line spacing, grown by fallback fonts.
    case normal
    /// CSS `line-height: <length>px`.
    case pixels(Double)
    /// CSS `line-height: <number>`: this many times the font size.
    case multiple(Double)
}

/// How whitespace and newlines are treated: the CSS `white-space` values a caption box
/// can use.
public enum WhiteSpace: Sendable, Hashable {
    /// `white-space: normal`: every run of whitespace, newlines included, is one space.
    case normal
    /// `white-space: pre-line`: spaces and tabs collapse, but each newline ends the line
    /// (the only mandatory break Chromium honours; U+2028 and U+2029 are ordinary
    /// characters to it).
    case preLine
}

/// The font and spacing a text is measured with.
///
/// Equal styles measure identically, so a style can key caches.
public struct TextStyle: Sendable, Hashable {
    /// The primary font: a font file path (anything containing a `/` or ending in .ttf, .otf, .ttc or .otc; the
    /// first face of a collection) or a family name that fontconfig resolves to a file.
    public var font: String
    /// The fonts a character the primary font lacks looks in, in this order (file paths or family names, as
    /// `font`): the first one that has every character of the grapheme cluster shapes it, as a browser does with
    /// the families of a CSS `font-family` list. Fontconfig only turns names into files; the machine's fallback
    /// order never decides, so the same list measures the same on every machine that has the same files.
    public var fallbackFonts: [String]
    /// When set, family names are looked up only among the fonts in this folder, not the machine's.
    public var fontDirectory: String?
    /// The font size in CSS pixels.
    public var size: Double
    /// The line height.
    public var lineHeight: LineHeight
    /// The CSS font weight: 400 regular, 700 bold. Picks the face when `font` is a family name.
    public var weight: Int
    /// Whether glyph advances keep their fractional part, as Blink does with subpixel
    /// positioning, or are rounded to whole pixels per glyph, as Blink does without it.
    ///
    /// Chromium on Linux uses subpixel positioning (a run of ten DejaVu Sans "i" at 14 px
    /// measures 38.90625 px there, not 40), so that is the default.
    public var subpixelPositioning: Bool
    /// Whether newlines force line breaks (`pre-line`) or collapse (`normal`, the default).
    public var whiteSpace: WhiteSpace

    /// Creates a style.
    ///
    /// - Parameters:
    ///   - font: A font file path or a fontconfig family name.
    ///   - fallbackFonts: The fonts for characters the primary font lacks, in order.
    ///   - fontDirectory: A folder to look family names up in instead of the machine's fonts.
    ///   - size: The font size in CSS pixels.
    ///   - lineHeight: The line height.
    ///   - weight: The CSS font weight (400 regular, 700 bold).
    ///   - subpixelPositioning: Whether glyph advances keep fractional pixels.
    ///   - whiteSpace: Whether newlines collapse or force line breaks.
    public init(
        font: String = "DejaVu Sans",
        fallbackFonts: [String] = TextStyle.standardFallbackFonts,
        fontDirectory: String? = nil,
        size: Double = 14,
        lineHeight: LineHeight = .normal,
        weight: Int = 400,
        subpixelPositioning: Bool = true,
        whiteSpace: WhiteSpace = .normal
    ) {
        self.font = font
        self.fallbackFonts = fallbackFonts
        self.fontDirectory = fontDirectory
        self.size = size
        self.lineHeight = lineHeight
        self.weight = weight
        self.subpixelPositioning = subpixelPositioning
        self.whiteSpace = whiteSpace
    }
}

extension TextStyle {
    /// The fallback fonts every style gets unless it names its own, chosen for coverage: DejaVu Sans (Latin,
    /// Greek, Cyrillic, Armenian, Georgian, Hebrew, Arabic, symbols, and for serif primaries), Devanagari, Thai,
    /// Chinese/Japanese/Korean (the Japanese face of the pan-CJK collection: Han, kana and Hangul) and colour emoji.
    /// `scripts/install-deps` installs them all (fonts-dejavu-core, fonts-noto-core, fonts-noto-cjk,
    /// fonts-noto-color-emoji).
    public static let standardFallbackFonts = [
        "DejaVu Sans", "Noto Sans Devanagari", "Noto Sans Thai", "Noto Sans CJK JP", "Noto Color Emoji",
    ]
}

/// The result of laying out one text at one width.
public struct TextMeasurement: Sendable, Equatable {
    /// The number of lines (0 for text that is empty after whitespace collapsing).
    public var lines: Int
    /// The block height in CSS pixels: the sum of the line box heights, 0 for empty text.
    public var height: Double
    /// The width of the widest line in CSS pixels, trailing spaces excluded, rounded up to
    /// a LayoutUnit (1/64 px) as Chromium reports a text's extent. Blink's fit test allows
    /// one LayoutUnit of slack, so a full line can exceed the available width by 1/64 px.
    public var width: Double
    /// Whether lines were cut off by `maxLines` (the last line then ends with "…").
    public var truncated: Bool
    /// The text of each line as laid out, without hanging spaces; the last one carries
    /// the ellipsis when the text was truncated, and a line broken at a soft hyphen
    /// ends with the hyphen that is shown there.
    ///
    /// Built when first read: callers that only need the line count and height (the
    /// layout engine) never pay for a string per line.
    public var lineTexts: [String] {
        get { lineTextSource.texts }
        set { lineTextSource = .texts(newValue) }
    }
    private var lineTextSource: LineTextSource

    /// Creates a measurement.
    public init(lines: Int, height: Double, width: Double, truncated: Bool, lineTexts: [String]) {
        self.lines = lines
        self.height = height
        self.width = width
        self.truncated = truncated
        self.lineTextSource = .texts(lineTexts)
    }

    /// Creates a measurement whose line texts are slices of the measured text content.
    init(lines: Int, height: Double, width: Double, truncated: Bool, content: [UInt16], lineSpans: [LineSpan]) {
        self.lines = lines
        self.height = height
        self.width = width
        self.truncated = truncated
        self.lineTextSource = .spans(content: content, lineSpans)
    }

    public static func == (left: TextMeasurement, right: TextMeasurement) -> Bool {
        left.lines == right.lines && left.height == right.height && left.width == right.width
            && left.truncated == right.truncated && left.lineTexts == right.lineTexts
    }
}

/// Where a line's text is in the text content, and what is shown after it.
struct LineSpan: Sendable {
    /// The UTF-16 range of the line's visible content.
    var range: Range<Int>
    /// A hyphen or an ellipsis the line ends with, or "".
    var suffix: String
}

/// The line texts of a measurement: given, or still to be cut from the text content.
///
/// A struct, not an enum with two payloads: such an enum keeps its case in a spare bit of a payload's pointer
/// (the `[LineSpan]` buffer's address was stored with its top bit set), which LeakSanitizer does not recognise as a
/// pointer, so every cached measurement's spans were reported leaked (FuzzTesting/leak-checks shows it).
private struct LineTextSource: Sendable {
    /// The texts as given; `nil` while they are still to be cut from `content`.
    private var given: [String]?
    private var content: [UInt16] = []
    private var spans: [LineSpan] = []

    static func texts(_ texts: [String]) -> LineTextSource { LineTextSource(given: texts) }

    static func spans(content: [UInt16], _ spans: [LineSpan]) -> LineTextSource {
        LineTextSource(given: nil, content: content, spans: spans)
    }

    var texts: [String] {
        if let given { return given }
        return content.withUnsafeBufferPointer { units in
            spans.map { span in TextPreparation.visibleText(units, span.range) + span.suffix }
        }
    }
}

/// Why a ``TextMeasurer`` could not be created.
///
/// A struct with an extensible code rather than an enum, so new failure kinds do not
/// break callers that switch over codes.
public struct TextMeasureError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// The font file does not exist or is not a font FreeType and HarfBuzz can read.
        public static let fontFileUnreadable = Code("fontFileUnreadable")
        /// No installed font has the requested family name.
        public static let fontFamilyNotFound = Code("fontFamilyNotFound")
        /// A style value is out of range (size or line height not positive and finite).
        public static let invalidStyle = Code("invalidStyle")
        /// ICU or fontconfig failed to initialise.
        public static let libraryFailure = Code("libraryFailure")
    }

    /// The kind of failure.
    public var code: Code
    /// What failed, for which input, and what to do about it.
    public var message: String

    /// Creates an error.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
