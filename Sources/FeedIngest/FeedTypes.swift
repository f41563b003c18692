/// One entry of a feed (an RSS `item`, an Atom `entry`, a JSON Feed item), normalised.
///
/// Every field is plain data so that records compare and serialise deterministically: the same
/// feed bytes give the same `FeedItem` values on every machine.
public struct FeedItem: Sendable, Equatable {
    /// 0-based position in feed order.
    public var index: Int
    /// The guid / Atom id; else the link; else a stable hash of title, date and caption.
    public var id: String
    /// The title as plain text.
    public var title: String?
    /// The caption: description / summary / content HTML turned into plain text.
    public var text: String?
    /// The item's link, resolved to an absolute URL where a base is known.
    public var link: String?
    /// The author: `author`, `dc:creator`, Atom `author/name`, `media:credit`, `itunes:author`.
    public var author: String?
    /// ISO 8601 UTC (`2024-05-01T12:00:00Z`); nil when absent or unparseable (then with a warning).
    public var published: String?
    /// The chosen image (see `FeedReader` for the choice order).
    public var image: FeedImage?
    /// The item's other usable images, in the choice order: what a layout tries when the chosen one
    /// turns out unreadable or not an image (only probing finds that out).
    public var imageFallbacks: [FeedImage]
    /// Every image candidate, in the order the item declares them.
    public var images: [FeedImage]
    /// What the feed says about the item's place in a layout (FeedLayout's `urn:feedlayout:1` extension).
    public var layout: LayoutHints
    /// Problems that concern this item, in the order they were found.
    public var warnings: [FeedWarning]

    /// Creates an item; every field except `index` and `id` defaults to empty.
    public init(
        index: Int, id: String, title: String? = nil, text: String? = nil, link: String? = nil,
        author: String? = nil, published: String? = nil, image: FeedImage? = nil, imageFallbacks: [FeedImage] = [],
        images: [FeedImage] = [], layout: LayoutHints = LayoutHints(), warnings: [FeedWarning] = []
    ) {
        self.layout = layout
        self.index = index
        self.id = id
        self.title = title
        self.text = text
        self.link = link
        self.author = author
        self.published = published
        self.image = image
        self.imageFallbacks = imageFallbacks
        self.images = images
        self.warnings = warnings
    }
}

/// How many columns an item asks for.
public enum SpanHint: Sendable, Hashable {
    case columns(Int)
    case fullWidth

    /// `2` → two columns; `full` (or `all`) → the whole row. Anything else (0, negative, words) is no span.
    public init?(_ text: String) {
        let value = text.trimmingASCIIWhitespace().lowercased()
        if value == "full" || value == "all" {
            self = .fullWidth
        } else if let count = Int(value), count >= 1 {
            self = .columns(count)
        } else {
            return nil
        }
    }
}

/// An item's layout hints, from FeedLayout's feed extension (namespace `urn:feedlayout:1`, conventionally
/// prefixed `fl`) or, in a JSON Feed, the item's `_feedlayout` object:
///
///     <fl:span>2</fl:span>          <!-- or "full": a featured pin across several columns -->
///     <fl:section>Monday</fl:section> <!-- a new section starts where this value changes -->
public struct LayoutHints: Sendable, Hashable {
    public var span: SpanHint?
    public var section: String?

    public init(span: SpanHint? = nil, section: String? = nil) {
        self.span = span
        self.section = section
    }
}

/// An image reference found in an item.
public struct FeedImage: Sendable, Equatable {
    /// For output: an absolute http(s) URL, or for local feeds the reference relative to the
    /// feed's directory (or to the image root). Never a machine-specific absolute path, so that
    /// output is byte-identical across machines.
    public var url: String
    /// The absolute filesystem path when the reference is a local file inside the allowed root
    /// (the feed's directory or `FeedIngestOptions.imageRoot`); nil for remote or refused ones.
    public var localPath: String?
    /// The declared width, read leniently ("800px" is 800).
    public var width: Int?
    /// The declared height, read leniently.
    public var height: Int?
    /// The declared MIME type (`image/jpeg`), if any.
    public var type: String?
    /// Where it came from: `media:content`, `media:thumbnail`, `enclosure`, `atom:link`,
    /// `itunes:image`, `html:img`, `json:image`.
    public var origin: String
    /// The image's alternative text, when the feed gives one: the `media:description`, else the `media:title`,
    /// inside its `media:content` / `media:thumbnail`; the `alt` of an `<img>` in the HTML; a JSON Feed
    /// attachment's `title`. Whitespace collapsed; nil when there is none (or it is empty).
    public var alt: String?

    /// Creates an image reference.
    public init(
        url: String, localPath: String? = nil, width: Int? = nil, height: Int? = nil,
        type: String? = nil, origin: String, alt: String? = nil
    ) {
        self.url = url
        self.localPath = localPath
        self.width = width
        self.height = height
        self.type = type
        self.origin = origin
        self.alt = alt
    }
}

/// A problem that did not stop the feed or its item from being laid out: a recovered XML error, an unparseable
/// date, a refused path (found while parsing), or a missing or corrupt image (found while probing). Every output
/// uses this one type, for items and for the feed as a whole.
public struct FeedWarning: Sendable, Hashable {
    /// A short stable identifier in camelCase, like every code FeedLayout writes: the parser's (`xmlError`,
    /// `invalidDate`, `refusedPath`, …) and the pipeline's (`imageNotFound`, `noImage`, …).
    public var code: String
    /// What happened, for a person.
    public var message: String
    /// 1-based line in the feed, when known.
    public var line: Int?
    /// 1-based column in the feed, when known.
    public var column: Int?

    /// Creates a warning.
    public init(code: String, message: String, line: Int? = nil, column: Int? = nil) {
        self.code = code
        self.message = message
        self.line = line
        self.column = column
    }
}

/// A failure that ends ingestion of one feed.
///
/// Like async-http-client's `HTTPClientError`, the code is a struct with static members so that
/// new codes can be added without breaking callers that switch over them.
public struct FeedIngestError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        /// The stable identifier, as printed.
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The input is no feed: an HTML page (a login wall, an error page, a site's home), a known
        /// non-feed file (an image, an archive, a program), binary data, or no markup in its first 64 KiB.
        public static let notAFeed = Code("notAFeed")
        /// The document parses, but its root element is not RSS, RDF or Atom.
        public static let unsupportedFormat = Code("unsupportedFormat")
        /// The input is larger than `FeedIngestOptions.maxInputBytes`.
        public static let inputTooLarge = Code("inputTooLarge")
        /// Entity expansion exceeded libxml2's limits (a "billion laughs" document).
        public static let entityExpansion = Code("entityExpansion")
        /// Nothing usable: empty input, no root element, or a document libxml2 gave up on.
        public static let malformedDocument = Code("malformedDocument")
        /// The file could not be opened or read.
        public static let readFailed = Code("readFailed")
        /// The JSON Feed could not be decoded.
        public static let invalidJSON = Code("invalidJSON")
        /// The reader was used after `finish()` or after a previous error.
        public static let readerFinished = Code("readerFinished")
    }

    /// The kind of failure.
    public var code: Code
    /// Which input, where, what happened and what to do.
    public var message: String
    /// The input's name (a path, `-`, or a URL).
    public var source: String
    /// 1-based line, when the failure has a position.
    public var line: Int?
    /// 1-based column, when the failure has a position.
    public var column: Int?

    /// Creates an error.
    public init(code: Code, message: String, source: String, line: Int? = nil, column: Int? = nil) {
        self.code = code
        self.message = message
        self.source = source
        self.line = line
        self.column = column
    }

    /// `source:line:column: error [code]: message`, the form compilers use so editors can jump.
    public var description: String {
        var location = source
        if let line {
            location += ":\(line)"
            if let column { location += ":\(column)" }
        }
        return "\(location): error [\(code)]: \(message)"
    }
}

/// Limits and roots for ingestion.
public struct FeedIngestOptions: Sendable {
    /// Inputs larger than this many bytes fail with `.inputTooLarge`.
    public var maxInputBytes: Int
    /// Captions (and titles) longer than this many characters are cut at a word boundary with "…".
    public var maxTextLength: Int
    /// The most bytes kept of one text field's raw markup; the rest is dropped with a warning, so
    /// that a 10 MB text node costs bounded memory.
    public var maxFieldBytes: Int
    /// A second directory local image references may point into (besides the feed's directory).
    public var imageRoot: String?
    /// The encoding the transport declared (an HTTP `Content-Type` charset), used only when the
    /// document declares none itself (no BOM, no `encoding` in the XML declaration).
    public var transportEncoding: String?

    /// Creates options.
    /// - Parameters:
    ///   - maxInputBytes: the input size limit; 4 GiB by default.
    ///   - maxTextLength: the caption length cap in characters; 2,000 by default.
    ///   - maxFieldBytes: the cap on one field's raw bytes; 1 MiB by default.
    ///   - imageRoot: an extra allowed directory for local images.
    ///   - transportEncoding: the charset the transport declared, for documents that declare none.
    public init(
        maxInputBytes: Int = 4 << 30, maxTextLength: Int = 2_000, maxFieldBytes: Int = 1 << 20,
        imageRoot: String? = nil, transportEncoding: String? = nil
    ) {
        self.maxInputBytes = maxInputBytes
        self.maxTextLength = maxTextLength
        self.maxFieldBytes = maxFieldBytes
        self.imageRoot = imageRoot
        self.transportEncoding = transportEncoding
    }
}

/// The syndication format of a feed.
public enum FeedFormat: String, Sendable {
    /// RSS 0.91 to 2.0 (`<rss>`).
    case rss
    /// RSS 0.90 / 1.0 (`<rdf:RDF>`).
    case rdf
    /// Atom 1.0 and 0.3 (`<feed>`).
    case atom
    /// JSON Feed 1.0 / 1.1.
    case jsonFeed
}

/// What `FeedReader.read(path:options:onItem:)` learned about the feed as a whole.
public struct FeedSummary: Sendable, Equatable {
    /// How many items were delivered.
    public var itemCount: Int
    /// The detected format.
    public var format: FeedFormat?
    /// The channel / feed title, as plain text.
    public var feedTitle: String?
    /// Problems not tied to one item.
    public var warnings: [FeedWarning]
    /// How many bytes were read.
    public var byteCount: Int

    /// Creates a summary.
    public init(itemCount: Int, format: FeedFormat?, feedTitle: String?, warnings: [FeedWarning], byteCount: Int) {
        self.itemCount = itemCount
        self.format = format
        self.feedTitle = feedTitle
        self.warnings = warnings
        self.byteCount = byteCount
    }
}
