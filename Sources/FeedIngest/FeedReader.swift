internal import CFeedLayoutShims
internal import CLibXML2

/// A streaming feed reader over libxml2's SAX2 push parser.
///
/// Feed it bytes in chunks of any size with `consume(_:)`; each call returns the items that
/// closed within that chunk, in feed order. `finish()` flushes the rest. Memory stays bounded by
/// the largest item (each text field is capped by `FeedIngestOptions.maxFieldBytes`), not by the
/// feed.
///
/// Formats: RSS 0.91–2.0, RSS 0.90 / 1.0 (RDF), Atom 1.0 and 0.3, with Media RSS, Dublin Core,
/// `content:encoded`, iTunes and Atom links inside RSS; namespaces are matched by URI (and, when a
/// feed forgets to declare a well-known prefix such as `media:`, by that prefix). JSON Feed is
/// recognised from its first byte and read entry by entry as its bytes arrive.
///
/// Image choice, per item: `media:content` (image medium or type; `isDefault`, else the
/// largest), inside or outside `media:group`; `media:thumbnail` (largest); an image enclosure or
/// Atom `rel="enclosure"` link; `itunes:image`; and only when none of those exist, the first
/// plausible `<img>` of `content:encoded` / description.
///
/// Security: libxml2 runs with `XML_PARSE_RECOVER | XML_PARSE_NONET`, never `NOENT`, `HUGE` or
/// `DTDLOAD`; external entities and DTDs are refused by the handler itself; entity-expansion
/// bombs hit libxml2's amplification limits and end with `.entityExpansion`.
///
/// One instance per feed, used from one task (it is not `Sendable`).
public final class FeedReader {
    let sourceName: String
    let options: FeedIngestOptions
    let resolver: URLResolver
    let converter = HTMLTextConverter()
    /// Finishes items for `consume` and `finish`, and JSON Feed items.
    let finisher: ItemFinisher
    /// What a ``FeedItemFinisher`` for this feed's captured items needs.
    public let finishing: FeedItemFinisher.Settings

    // Input: what has come in and how it is read (see `FeedInputDetection`).
    var parser: xmlParserCtxtPtr?
    /// The sanitizer, when the encoding allows one, until `detachSanitizer()` hands it out.
    var sanitizing: SanitizingStream?
    /// Whether the sanitizer was handed out: from then on only sanitized chunks come in.
    private var sanitizerDetached = false
    /// Bytes held back before the encoding decision.
    private var pending: [UInt8] = []
    /// Reads a JSON Feed entry by entry, once the first bytes said it is one.
    private var jsonFeed: JSONFeedDecoder?
    var inputByteCount = 0
    private var decided = false
    private var isJSON = false
    private var finished = false
    var failure: FeedIngestError?

    // SAX state (see FeedReader+SAX.swift). Read and written on every SAX event, so without dynamic
    // exclusivity checks (a few percent of ingest in profiles). That is safe: the reader is used from
    // one task, and no access to one of these overlaps another to the same one (each is a single
    // statement, or a mutating call on `ItemBuilder`, a value type that cannot reach the reader).
    @exclusivity(unchecked) var depth = 0
    /// An element the parser is inside: what the reader needs of its parent.
    typealias OpenElement = (namespace: Namespace, name: ElementName)
    @exclusivity(unchecked) var elementNames: [OpenElement] = []
    @exclusivity(unchecked) var baseStack: [(depth: Int, base: String)] = []
    @exclusivity(unchecked) var item: ItemBuilder?
    @exclusivity(unchecked) var itemDepth = 0
    /// The image (its place in the item's list) whose `media:description` (true) or `media:title` (false) is
    /// being captured: it becomes the image's alternative text too.
    var imageTextTarget: (image: Int, isDescription: Bool)?
    /// Depth of an Atom `<source>` being skipped: its title, id and links describe the feed the
    /// entry was copied from, not the entry.
    @exclusivity(unchecked) var skippedDepth: Int?
    /// The field being captured, behind a pointer: text arrives in many small SAX events, and a
    /// class property would cost a retain, a release and exclusivity checks on each.
    let capture: UnsafeMutablePointer<FieldCapture>
    /// Whether the channel / feed title was read (the first one counts).
    @exclusivity(unchecked) var feedTitleSeen = false
    @exclusivity(unchecked) var rootSeen = false
    var rootClosed = false
    /// Whether libxml2 halted before the end of the input: the rest cannot add anything, so it is not read.
    public internal(set) var hasStoppedParsing = false
    @exclusivity(unchecked) var nextIndex = 0
    @exclusivity(unchecked) var completed: [CapturedFeedItem] = []
    @exclusivity(unchecked) var namespaceCache: [UnsafeRawPointer: Namespace] = [:]
    /// The last namespace looked up by URI pointer: an item's elements use one or two, and a hashed lookup per
    /// element showed up in profiles.
    @exclusivity(unchecked) var lastNamespace: (key: UnsafeRawPointer, namespace: Namespace)?
    /// Element names, as written and as ``ElementName``, by libxml2's interned pointer, direct-mapped (a collision
    /// just maps the name again): a hashed dictionary lookup per element showed up in profiles.
    let nameCache: UnsafeMutablePointer<(key: UnsafeRawPointer?, name: String, element: ElementName)>
    static let nameCacheSize = 512  // the hash in `nameSlot(_:)` keeps its top 9 bits

    // Warnings (see FeedReader+Warnings.swift).
    /// Feed-level warnings, in the order found.
    var feedLevelWarnings = FeedLevelWarnings()
    /// Sanitizer repairs the parser has not reached yet (at most one chunk's worth).
    var pendingRepairs = PendingRepairs()
    /// Whether `pendingRepairs` holds repairs not yet given out, read on every SAX event: behind a
    /// pointer, so that the check costs no exclusivity bookkeeping.
    let repairsWaiting: UnsafeMutablePointer<Bool>

    /// The detected format, once the root element (or the first JSON byte) has been seen.
    @exclusivity(unchecked) public internal(set) var format: FeedFormat?

    /// The channel / feed title as plain text, once it has been read.
    public internal(set) var feedTitle: String?

    /// Problems not tied to one item (encoding repairs, errors between items, garbage after the
    /// root), in the order found.
    public var feedWarnings: [FeedWarning] { feedLevelWarnings.all }

    /// Creates a reader for one feed.
    /// - Parameters:
    ///   - sourceName: how errors name the input (a path, `-`, a URL).
    ///   - baseURL: the feed's own http(s) URL, the last base for relative references.
    ///   - feedDirectory: the directory of a local feed; relative image references resolve
    ///     against it and must stay inside it (or `options.imageRoot`).
    ///   - options: limits and roots.
    /// Numbers the items from `index` rather than 0: the reader of a feed resumed by bytes
    /// (``FeedByteSplitter/resumedFeed(_:atItemStart:knownLines:)``), whose first item is the whole feed's item `index`.
    package func numberItems(from index: Int) {
        precondition(nextIndex == 0, "items are numbered before the first is read")
        nextIndex = index
    }

    public init(sourceName: String, baseURL: String?, feedDirectory: String?, options: FeedIngestOptions = .init()) {
        self.sourceName = sourceName
        self.options = options
        self.resolver = URLResolver(feedURL: baseURL, feedDirectory: feedDirectory, imageRoot: options.imageRoot)
        self.finisher = ItemFinisher(resolver: resolver, converter: converter, options: options)
        self.finishing = FeedItemFinisher.Settings(baseURL: baseURL, feedDirectory: feedDirectory, options: options)
        capture = .allocate(capacity: 1)
        capture.initialize(to: FieldCapture())
        repairsWaiting = .allocate(capacity: 1)
        repairsWaiting.initialize(to: false)
        nameCache = .allocate(capacity: Self.nameCacheSize)
        nameCache.initialize(repeating: (nil, "", .other), count: Self.nameCacheSize)
    }

    deinit {
        capture.deinitialize(count: 1)
        capture.deallocate()
        repairsWaiting.deallocate()
        nameCache.deinitialize(count: Self.nameCacheSize)
        nameCache.deallocate()
        if let parser {
            if let document = parser.pointee.myDoc { xmlFreeDoc(document) }
            xmlFreeParserCtxt(parser)
        }
    }

    /// The most bytes parsed at once (a larger chunk is parsed in pieces of this size): the pipeline's read size.
    static let largestChunk = 256 * 1024

    /// Parses the next chunk of the feed.
    ///
    /// The first kilobyte is held back until the encoding is known (BOM, XML declaration, JSON), and up
    /// to 64 KiB while no markup has come (see ``FeedInputDetection``).
    /// An item comes out with the chunk that completes its end tag, or, when libxml2's push
    /// parser waits for more input after a tag that ends exactly at a chunk's end, with the next.
    /// - Parameter bytes: the chunk; any size, split anywhere (even inside a UTF-8 sequence).
    /// - Returns: the items that closed within this chunk, in feed order.
    /// - Throws: `FeedIngestError` when the input is not a feed, too large, an entity bomb, or the
    ///   reader was already finished or failed.
    public func consume(_ bytes: UnsafeRawBufferPointer) throws(FeedIngestError) -> [FeedItem] {
        try captureItems(bytes).map(finisher.finish)
    }

    /// Parses the next chunk like ``consume(_:)``, but hands out the items as captured, for a
    /// ``FeedItemFinisher`` made from ``finishing`` to finish, on another task if wanted.
    /// - Parameter bytes: the chunk; any size, split anywhere.
    /// - Returns: the items that closed within this chunk, in feed order.
    /// - Throws: as ``consume(_:)``.
    public func captureItems(_ bytes: UnsafeRawBufferPointer) throws(FeedIngestError) -> [CapturedFeedItem] {
        // Parsed in pieces of at most the pipeline's read size: libxml2 handed a whole feed of more than 16 MiB at
        // once stopped after that much, without an error (a 58 MB feed gave 7,769 of its 100,020 items).
        guard bytes.count <= Self.largestChunk else {
            var items: [CapturedFeedItem] = []
            var start = 0
            while start < bytes.count {
                let end = min(bytes.count, start + Self.largestChunk)
                items += try captureItems(UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
                start = end
            }
            return items
        }
        precondition(!sanitizerDetached, "the sanitizer was detached: pass its sanitized chunks")
        try checkUsable()
        inputByteCount += bytes.count
        if inputByteCount > options.maxInputBytes {
            fail(FeedIngestError.inputTooLarge(limit: options.maxInputBytes, source: sourceName))
            try checkUsable()
        }
        if isJSON {
            try completeJSONItems(jsonFeed!.consume(bytes.bindMemory(to: UInt8.self)))
        } else if !decided {
            pending.append(contentsOf: bytes.bindMemory(to: UInt8.self))
            if pending.count >= 1024 && !FeedInputDetection.needsMoreBytes(pending) { try decide() }
        } else {
            try feed(bytes.bindMemory(to: UInt8.self), isFinal: false)
        }
        try checkUsable()
        return takeCompleted()
    }

    /// Hands out the input sanitizer, so that another task can clean the rest of the input ahead of
    /// this reader (see ``FeedInputSanitizer``). From then on the reader takes only its chunks:
    /// ``captureItems(sanitized:)``, and ``captureRemainingItems(sanitized:)`` at the end.
    /// - Returns: the sanitizer, once the reader has decided how to read the feed and when that
    ///   decision uses one (not for JSON, UTF-16 or other encodings libxml2 decodes itself); else nil.
    public func detachSanitizer() -> FeedInputSanitizer? {
        guard decided, !isJSON, !finished, failure == nil, let stream = sanitizing else { return nil }
        sanitizing = nil
        sanitizerDetached = true
        return FeedInputSanitizer(
            stream: stream, sourceName: sourceName, maxInputBytes: options.maxInputBytes,
            inputByteCount: inputByteCount)
    }

    /// Parses a chunk the detached sanitizer cleaned.
    /// - Returns: the items that closed within it, in feed order.
    /// - Throws: as ``consume(_:)``.
    public func captureItems(sanitized chunk: SanitizedChunk) throws(FeedIngestError) -> [CapturedFeedItem] {
        precondition(sanitizerDetached && !chunk.isFinal, "pass the final chunk to captureRemainingItems(sanitized:)")
        try checkUsable()
        parse(sanitized: chunk)
        try checkUsable()
        return takeCompleted()
    }

    /// Ends the feed with the detached sanitizer's last chunk (``FeedInputSanitizer/finish()``).
    /// - Returns: the items completed by the end of input.
    /// - Throws: as ``finish()``.
    public func captureRemainingItems(sanitized last: SanitizedChunk) throws(FeedIngestError) -> [CapturedFeedItem] {
        precondition(sanitizerDetached && last.isFinal, "the last chunk comes from FeedInputSanitizer.finish()")
        try checkUsable()
        parse(sanitized: last)
        return try endOfInput()
    }

    /// Ends the feed: flushes held-back bytes, closes an unclosed item, reports the rest.
    /// - Returns: the items completed by the end of input.
    /// - Throws: `FeedIngestError` when the input had no feed in it at all.
    public func finish() throws(FeedIngestError) -> [FeedItem] {
        try captureRemainingItems().map(finisher.finish)
    }

    /// Ends the feed like ``finish()``, handing out the last items as captured.
    /// - Returns: the items completed by the end of input.
    /// - Throws: as ``finish()``.
    public func captureRemainingItems() throws(FeedIngestError) -> [CapturedFeedItem] {
        try checkUsable()
        if !decided { try decide() }
        if isJSON {
            finished = true
            try completeJSONItems(jsonFeed!.finish())
            return takeCompleted()
        }
        precondition(!sanitizerDetached, "the sanitizer was detached: end with captureRemainingItems(sanitized:)")
        try feed(UnsafeBufferPointer(start: nil, count: 0), isFinal: true)
        return try endOfInput()
    }

    /// After the last bytes were parsed: closes an unclosed item and checks that there was a feed.
    private func endOfInput() throws(FeedIngestError) -> [CapturedFeedItem] {
        try checkUsable()
        if item != nil {
            warn(
                code: "unclosedItem", message: "the feed ended inside an item; it was kept as parsed", line: nil,
                column: nil)
            closeItem()
        }
        finished = true
        if !rootSeen {
            let empty = inputByteCount == 0
            throw FeedIngestError(
                code: .malformedDocument,
                message: empty
                    ? "the input is empty; expected an RSS, Atom or JSON feed"
                    : "no root element in \(inputByteCount) bytes; the input is not XML (check that the path or URL points at the feed)",
                source: sourceName)
        }
        return takeCompleted()
    }

    private func checkUsable() throws(FeedIngestError) {
        if let failure { throw failure }
        if finished {
            throw FeedIngestError(
                code: .readerFinished, message: "the reader was already finished; create a new FeedReader per feed",
                source: sourceName)
        }
    }

    /// Stops the reader at its first failure; later calls throw it.
    func fail(_ error: FeedIngestError) {
        if failure == nil { failure = error }
        if let parser { xmlStopParser(parser) }
    }

    private func completeJSONItems(_ items: [FeedItem]) {
        completed.append(contentsOf: items.map(CapturedFeedItem.init(finished:)))
    }

    private func takeCompleted() -> [CapturedFeedItem] {
        defer { completed.removeAll(keepingCapacity: true) }
        return completed
    }

    /// Decides from the held-back first bytes how to read the feed, and starts reading it.
    private func decide() throws(FeedIngestError) {
        decided = true
        switch FeedInputDetection(head: pending, transportCharset: options.transportEncoding) {
        case .json(let start):
            isJSON = true
            format = .jsonFeed
            jsonFeed = JSONFeedDecoder(reader: self)
            let held = pending
            pending = []
            try held.withUnsafeBufferPointer { (buffer) throws(FeedIngestError) in
                try completeJSONItems(jsonFeed!.consume(UnsafeBufferPointer(rebasing: buffer[start...])))
            }
        case .htmlPage:
            fail(.htmlPage(source: sourceName, line: 1, column: 1))
            throw failure!
        case .notAFeed(let reason):
            fail(FeedIngestError(code: .notAFeed, message: reason, source: sourceName))
            throw failure!
        case .xml(let start, let skippedJunk, let encoding):
            if skippedJunk > 0 {
                warn(
                    code: "junkBeforeRoot",
                    message: "\(skippedJunk) bytes before the XML declaration or root were skipped",
                    line: 1, column: 1)
            }
            if case .unknownReadAsUTF8(let label) = encoding {
                warn(
                    code: "unknownEncoding", message: "unknown encoding '\(label.prefix(40))' was read as UTF-8",
                    line: 1, column: nil)
            }
            let held = pending
            pending = []
            try startParsing(encoding: encoding)
            try held.withUnsafeBufferPointer { (buffer) throws(FeedIngestError) in
                try feed(UnsafeBufferPointer(rebasing: buffer[start...]), isFinal: false)
            }
        }
    }
}

extension FeedIngestError {
    static func htmlPage(source: String, line: Int?, column: Int?) -> FeedIngestError {
        FeedIngestError(
            code: .notAFeed,
            message:
                "this is an HTML page, not a feed; the site may link its feed from a <link rel=\"alternate\"> in this page",
            source: source, line: line, column: column)
    }
}
