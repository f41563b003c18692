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
/// recognised from its first byte and decoded at `finish()`.
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

    private var parser: xmlParserCtxtPtr?
    /// The sanitizer, when the encoding allows one, until `detachSanitizer()` hands it out.
    private var sanitizing: SanitizingStream?
    /// Whether the sanitizer was handed out: from then on only sanitized chunks come in.
    private var sanitizerDetached = false
    /// Bytes held back before the encoding decision (all of a JSON feed).
    private var pending: [UInt8] = []
    /// Reused output buffer of the sanitizer.
    private var cleanBytes: [UInt8] = []
    private var inputByteCount = 0
    private var decided = false
    private var isJSON = false
    private var finished = false
    private var failure: FeedIngestError?

    // SAX state.
    private var depth = 0
    private var elementNames: [(namespace: Namespace, name: String)] = []
    private var baseStack: [(depth: Int, base: String)] = []
    private var item: ItemBuilder?
    private var itemDepth = 0
    /// Depth of an Atom `<source>` being skipped: its title, id and links describe the feed the
    /// entry was copied from, not the entry.
    private var skippedDepth: Int?
    /// The field being captured, behind a pointer: text arrives in many small SAX events, and a
    /// class property would cost a retain, a release and exclusivity checks on each.
    private let capture: UnsafeMutablePointer<Capture>
    /// Whether the channel / feed title was read (the first one counts).
    private var feedTitleSeen = false
    private var rootSeen = false
    private var rootClosed = false
    private var nextIndex = 0
    private var completed: [CapturedFeedItem] = []
    private var feedWarningList: [FeedWarning] = []
    private var suppressedFeedWarnings = 0
    private var namespaceCache: [UnsafeRawPointer: Namespace] = [:]
    /// Sanitiser repairs the parser has not reached yet (at most one chunk's worth).
    private var pendingRepairs: [InputSanitizer.Repair] = []
    private var pendingRepairsHead = 0
    /// Whether `pendingRepairs` holds repairs not yet given out, read on every SAX event: behind a
    /// pointer, so that the check costs no exclusivity bookkeeping.
    private let repairsWaiting: UnsafeMutablePointer<Bool>
    /// Where each repair kind's summary warning sits in the feed warnings, and its count.
    private var feedRepairSummaries = RepairSummaries()
    /// Element names by libxml2's interned pointer, direct-mapped (a collision just makes the
    /// String again): a hashed dictionary lookup per element showed up in profiles.
    private let nameCache: UnsafeMutablePointer<(key: UnsafeRawPointer?, name: String)>
    private static let nameCacheSize = 512  // the hash below keeps its top 9 bits

    /// The detected format, once the root element (or the first JSON byte) has been seen.
    public private(set) var format: FeedFormat?

    /// The channel / feed title as plain text, once it has been read.
    public internal(set) var feedTitle: String?

    /// Problems not tied to one item (encoding repairs, errors between items, garbage after the
    /// root), in the order found.
    public var feedWarnings: [FeedWarning] {
        var result = feedWarningList
        if suppressedFeedWarnings > 0 {
            result.append(
                FeedWarning(
                    code: "too-many-warnings", message: "\(suppressedFeedWarnings) more feed warnings were dropped"))
        }
        return result
    }

    /// Creates a reader for one feed.
    /// - Parameters:
    ///   - sourceName: how errors name the input (a path, `-`, a URL).
    ///   - baseURL: the feed's own http(s) URL, the last base for relative references.
    ///   - feedDirectory: the directory of a local feed; relative image references resolve
    ///     against it and must stay inside it (or `options.imageRoot`).
    ///   - options: limits and roots.
    public init(sourceName: String, baseURL: String?, feedDirectory: String?, options: FeedIngestOptions = .init()) {
        self.sourceName = sourceName
        self.options = options
        self.resolver = URLResolver(feedURL: baseURL, feedDirectory: feedDirectory, imageRoot: options.imageRoot)
        self.finisher = ItemFinisher(resolver: resolver, converter: converter, options: options)
        self.finishing = FeedItemFinisher.Settings(baseURL: baseURL, feedDirectory: feedDirectory, options: options)
        capture = .allocate(capacity: 1)
        capture.initialize(to: Capture())
        repairsWaiting = .allocate(capacity: 1)
        repairsWaiting.initialize(to: false)
        nameCache = .allocate(capacity: Self.nameCacheSize)
        nameCache.initialize(repeating: (nil, ""), count: Self.nameCacheSize)
    }

    deinit {
        capture.pointee.release()
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

    /// Parses the next chunk of the feed.
    ///
    /// The first kilobyte is held back until the encoding is known (BOM, XML declaration, JSON).
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
        precondition(!sanitizerDetached, "the sanitizer was detached: pass its sanitized chunks")
        try checkUsable()
        inputByteCount += bytes.count
        if inputByteCount > options.maxInputBytes {
            fail(FeedIngestError.inputTooLarge(limit: options.maxInputBytes, source: sourceName))
            try checkUsable()
        }
        if isJSON || !decided {
            pending.append(contentsOf: bytes.bindMemory(to: UInt8.self))
            if !decided && pending.count >= 1024 { try decide() }
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
            let items = try JSONFeedDecoder(reader: self).decode(pending)
            pending = []
            return items.map(CapturedFeedItem.init(finished:))
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
                code: "unclosed-item", message: "the feed ended inside an item; it was kept as parsed", line: nil,
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

    // MARK: Input

    private func checkUsable() throws(FeedIngestError) {
        if let failure { throw failure }
        if finished {
            throw FeedIngestError(
                code: .readerFinished, message: "the reader was already finished; create a new FeedReader per feed",
                source: sourceName)
        }
    }

    private func fail(_ error: FeedIngestError) {
        if failure == nil { failure = error }
        if let parser { xmlStopParser(parser) }
    }

    private func takeCompleted() -> [CapturedFeedItem] {
        defer { completed.removeAll(keepingCapacity: true) }
        return completed
    }

    /// Looks at the first bytes: BOM, XML declaration, JSON, or an HTML page.
    private func decide() throws(FeedIngestError) {
        decided = true
        var start = 0
        var bomEncoding: String?
        if pending.starts(with: [0xEF, 0xBB, 0xBF]) {
            start = 3
            bomEncoding = "utf-8"
        } else if pending.starts(with: [0xFE, 0xFF]) || pending.starts(with: [0xFF, 0xFE])
            || pending.starts(with: [0x00, 0x3C]) || pending.starts(with: [0x3C, 0x00])
        {
            bomEncoding = "utf-16"
        }
        if bomEncoding != "utf-16" {
            // Junk before the root: whitespace, stray text, a second BOM. XML allows none of it
            // before the declaration; a feed reader should not care.
            while start < pending.count && pending[start] != UInt8(ascii: "<") && pending[start] != UInt8(ascii: "{") {
                start += 1
            }
            // An XML declaration after junk (a comment or text an include added first) must
            // still come first for libxml2: start there.
            if let declaration = Self.offset(of: Array("<?xml ".utf8), in: pending, from: start), declaration > start {
                start = declaration
            }
            if start < pending.count && pending[start] == UInt8(ascii: "{") {
                isJSON = true
                format = .jsonFeed
                pending.removeFirst(start)
                return
            }
            if Self.looksLikeHTML(pending[start...]) {
                fail(
                    FeedIngestError(
                        code: .notAFeed,
                        message:
                            "this is an HTML page, not a feed; the site may link its feed from a <link rel=\"alternate\"> in this page",
                        source: sourceName, line: 1, column: 1))
                throw failure!
            }
            let bomLength = bomEncoding == nil ? 0 : 3
            if start > bomLength {
                warn(
                    code: "junk-before-root",
                    message: "\(start - bomLength) bytes before the XML declaration or root were skipped",
                    line: 1, column: 1)
            }
        }
        let documentEncoding = bomEncoding ?? Self.declaredEncoding(pending[start...])
        // An HTTP charset counts only when the document is silent (a declaration, when there is
        // one, was written with the bytes; a server's default charset often was not).
        let transportEncoding =
            documentEncoding == nil
            ? self.options.transportEncoding.map { $0.lowercased() }.flatMap { $0.isEmpty ? nil : $0 } : nil
        let declared = documentEncoding ?? transportEncoding ?? "utf-8"
        var options = Int32(XML_PARSE_RECOVER.rawValue | XML_PARSE_NONET.rawValue | XML_PARSE_NOCDATA.rawValue)
        switch declared {
        case "utf-8", "utf8":
            sanitizing = SanitizingStream(InputSanitizer(decoding: .utf8))
        case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "us-ascii", "ascii", "windows-1252", "cp1252",
            "iso_8859-1", "x-cp1252":
            sanitizing = SanitizingStream(InputSanitizer(decoding: .windows1252))
        default:
            if Self.libxml2KnowsEncoding(declared) {
                sanitizing = nil  // libxml2 (iconv) decodes UTF-16, Shift_JIS, KOI8-R…
            } else {
                // An unknown label ("utf8mb4", "UTF-8lies") would stop libxml2 before the root.
                warn(
                    code: "unknown-encoding", message: "unknown encoding '\(declared.prefix(40))' was read as UTF-8",
                    line: 1, column: nil)
                sanitizing = SanitizingStream(InputSanitizer(decoding: .utf8))
            }
        }
        if sanitizing != nil { options |= Int32(XML_PARSE_IGNORE_ENC.rawValue) }
        let held = pending
        pending = []
        // Nothing in the document names a transport-declared encoding for libxml2: say it.
        try createParser(options: options, encoding: sanitizing == nil ? transportEncoding : nil)
        try held.withUnsafeBufferPointer { (buffer) throws(FeedIngestError) in
            try feed(UnsafeBufferPointer(rebasing: buffer[start...]), isFinal: false)
        }
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

    private static func libxml2KnowsEncoding(_ name: String) -> Bool {
        guard let handler = xmlFindCharEncodingHandler(name) else { return false }
        xmlCharEncCloseFunc(handler)
        return true
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

    private func createParser(options: Int32, encoding: String?) throws(FeedIngestError) {
        xmlInitParser()  // idempotent and locked inside libxml2; needed before threads share it
        var handler = xmlSAXHandler()
        fl_xml_prepare_sax_handler(&handler, FeedReader.structuredErrorCallback)
        handler.startElementNs = FeedReader.startElementCallback
        handler.endElementNs = FeedReader.endElementCallback
        handler.characters = FeedReader.charactersCallback
        handler.cdataBlock = FeedReader.charactersCallback
        handler.reference = FeedReader.referenceCallback
        // NULL user data: libxml2 then passes the context itself, which its SAX2 defaults (kept
        // for the internal subset) require; the reader travels in `_private`.
        guard let context = xmlCreatePushParserCtxt(&handler, nil, nil, 0, sourceName) else {
            throw FeedIngestError(
                code: .malformedDocument, message: "libxml2 could not create a parser (out of memory?)",
                source: sourceName)
        }
        if let encoding {
            // The push parser's documented way to set an encoding; it resets the context first.
            xmlCtxtResetPush(context, nil, 0, sourceName, encoding)
        }
        context.pointee._private = Unmanaged.passUnretained(self).toOpaque()
        xmlCtxtUseOptions(context, options)
        if sanitizing != nil { xmlSwitchEncoding(context, XML_CHAR_ENCODING_UTF8) }
        parser = context
    }

    /// Sanitises (when the encoding allows) and parses bytes.
    private func feed(_ bytes: UnsafeBufferPointer<UInt8>, isFinal: Bool) throws(FeedIngestError) {
        guard let parser else { return }
        if sanitizing != nil {
            cleanBytes.removeAll(keepingCapacity: true)
            sanitizing!.clean(bytes, isFinal: isFinal, into: &cleanBytes, repairs: &pendingRepairs)
            parseSanitized(cleanBytes, isFinal: isFinal, parser: parser)
        } else {
            parse(Array(bytes), isFinal: isFinal, parser: parser)
        }
    }

    /// Parses bytes the detached sanitizer cleaned.
    private func parse(sanitized chunk: SanitizedChunk) {
        inputByteCount = chunk.inputByteCount
        guard let parser else { return }
        pendingRepairs.append(contentsOf: chunk.repairs)
        parseSanitized(chunk.bytes, isFinal: chunk.isFinal, parser: parser)
    }

    /// Parses clean bytes whose repairs are already in `pendingRepairs`, handing each repair to the item the
    /// parser is in when it gets there (the rest at the end of the input).
    private func parseSanitized(_ bytes: [UInt8], isFinal: Bool, parser: xmlParserCtxtPtr) {
        if pendingRepairsHead < pendingRepairs.count { repairsWaiting.pointee = true }
        parse(bytes, isFinal: isFinal, parser: parser)
        if isFinal { attributeRepairs(upTo: Int.max) }
    }

    private func parse(_ bytes: [UInt8], isFinal: Bool, parser: xmlParserCtxtPtr) {
        // libxml2 takes an Int32 length: very large chunks go in pieces.
        let step = 1 << 24
        var offset = 0
        // Errors without a parser context (iconv failures) would go to the thread's generic
        // handler, which prints to stderr: route them to this reader while it parses.
        var savedHandlers = fl_xml_error_scope()
        fl_xml_error_scope_enter(&savedHandlers, UnsafeMutableRawPointer(parser), FeedReader.structuredErrorCallback)
        defer { fl_xml_error_scope_leave(&savedHandlers) }
        bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                repeat {
                    let length = min(step, chars.count - offset)
                    let last = isFinal && offset + length == chars.count
                    if failure != nil { return }
                    _ = xmlParseChunk(parser, chars.baseAddress.map { $0 + offset }, Int32(length), last ? 1 : 0)
                    offset += length
                } while offset < chars.count
            }
        }
    }

    // MARK: Warnings

    /// Gives every repair the parser has passed to the item it is in (or to the feed).
    private func attributeRepairs(upTo consumed: Int) {
        while pendingRepairsHead < pendingRepairs.count, pendingRepairs[pendingRepairsHead].outputOffset < consumed {
            let repair = pendingRepairs[pendingRepairsHead]
            pendingRepairsHead += 1
            if item != nil {
                item!.recordRepair(repair)
            } else {
                feedRepairSummaries.record(repair, into: &feedWarningList)
            }
        }
        if pendingRepairsHead == pendingRepairs.count {
            pendingRepairs.removeAll(keepingCapacity: true)
            pendingRepairsHead = 0
            repairsWaiting.pointee = false
        }
    }

    /// Called from SAX events: cheap unless a repair is waiting.
    @inline(__always)
    private func attributeRepairsIfAny() {
        guard repairsWaiting.pointee, pendingRepairsHead < pendingRepairs.count, let parser else { return }
        attributeRepairs(upTo: Int(xmlByteConsumed(parser)))
    }

    private func warn(code: String, message: String, line: Int?, column: Int?, feedLevel: Bool = false) {
        let warning = FeedWarning(code: code, message: message, line: line, column: column)
        if !feedLevel, item != nil {
            // libxml2 repeats some errors (an encoding failure once per retry): say it once.
            if item!.warnings.last != warning { item!.warn(warning) }
            return
        }
        if feedWarningList.last == warning { return }
        guard feedWarningList.count < 100 else {
            suppressedFeedWarnings += 1
            return
        }
        feedWarningList.append(warning)
    }

    fileprivate func handleError(_ error: UnsafePointer<xmlError>) {
        let code = Int(error.pointee.code)
        let line = error.pointee.line > 0 ? Int(error.pointee.line) : nil
        let column = error.pointee.int2 > 0 ? Int(error.pointee.int2) : nil
        var message = error.pointee.message.map { String(cString: $0) } ?? "XML error \(code)"
        while message.last == "\n" || message.last == " " { message.removeLast() }
        if code == Int(XML_ERR_ENTITY_LOOP.rawValue) {
            fail(
                FeedIngestError(
                    code: .entityExpansion,
                    message:
                        "entity expansion exceeds libxml2's limits (\(message)); this looks like an entity bomb and is not parsed further",
                    source: sourceName, line: line, column: column))
            return
        }
        if code == Int(XML_ERR_DOCUMENT_END.rawValue) && rootClosed {
            warn(
                code: "garbage-after-root", message: "content after the end of the feed was ignored", line: line,
                column: column)
            return
        }
        if code == Int(XML_ERR_DOCUMENT_EMPTY.rawValue) { return }  // reported by finish()
        let isEncodingError =
            error.pointee.domain == Int32(XML_FROM_I18N.rawValue)
            || code == Int(XML_ERR_INVALID_ENCODING.rawValue) || code == Int(XML_ERR_UNSUPPORTED_ENCODING.rawValue)
        warn(code: isEncodingError ? "encoding-error" : "xml-error", message: message, line: line, column: column)
    }

    // MARK: SAX events

    fileprivate func startElement(
        localName: UnsafePointer<xmlChar>, prefix: UnsafePointer<xmlChar>?, uri: UnsafePointer<xmlChar>?,
        attributeCount: Int, attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
    ) {
        attributeRepairsIfAny()
        depth += 1
        let namespace = self.namespace(uri: uri, prefix: prefix)
        let name = self.name(localName)
        let parent = elementNames.last
        elementNames.append((namespace, name))
        let attributeList = Attributes(pointer: attributes, count: attributeCount, reader: self)

        if let xmlBase = attributeList.value(namespace: .xml, name: "base") {
            let resolved = resolver.resolveLink(xmlBase, bases: [baseStack.last?.base])
            baseStack.append((depth, resolved))
        }

        if !rootSeen {
            rootSeen = true
            switch (namespace, name) {
            case (.none, "rss"), (.rss10, "rss"): format = .rss
            case (.rdf, "RDF"): format = .rdf
            case (.atom10, "feed"), (.atom03, "feed"), (.none, "feed"): format = .atom
            case (_, "html"), (_, "HTML"):
                fail(
                    FeedIngestError(
                        code: .notAFeed,
                        message:
                            "this is an HTML page, not a feed; the site may link its feed from a <link rel=\"alternate\"> in this page",
                        source: sourceName, line: currentLine, column: nil))
            default:
                fail(
                    FeedIngestError(
                        code: .unsupportedFormat,
                        message:
                            "the root element is <\(name)>, not <rss>, <rdf:RDF> or <feed>; this is XML but not a feed format FeedLayout reads",
                        source: sourceName, line: currentLine, column: nil))
            }
            return
        }

        if capture.pointee.isActive {
            capture.pointee.appendStartTag(name: name, attributes: attributeList)
            return
        }

        if isItemElement(namespace, name) {
            if item != nil {
                warn(
                    code: "unclosed-item", message: "a new item started before the previous one closed",
                    line: currentLine, column: nil)
                closeItem()
            }
            var builder = ItemBuilder()
            builder.base = baseStack.last?.base
            builder.about = attributeList.value(namespace: .rdf, name: "about")
            item = builder
            itemDepth = depth
            return
        }

        guard item != nil else {
            // Channel level: only the feed's title matters here.
            if !feedTitleSeen, name == "title", namespace.isCore,
                let parent, parent.name == "channel" || (parent.name == "feed" && depth == 2)
            {
                let kind: TextKind = format == .atom ? textKind(attributeList, default: .plain) : .maybeHTML
                capture.pointee.begin(
                    field: nil, depth: depth, kind: kind, limit: options.maxFieldBytes, line: currentLine)
            }
            return
        }
        if skippedDepth != nil { return }
        if name == "source" && (namespace == .atom10 || namespace == .atom03 || (namespace == .none && format == .atom))
        {
            skippedDepth = depth
            return
        }
        startItemChild(namespace: namespace, name: name, parent: parent, attributes: attributeList)
    }

    private func startItemChild(
        namespace: Namespace, name: String, parent: (namespace: Namespace, name: String)?, attributes: Attributes
    ) {
        func captureField(_ field: ItemField, _ kind: TextKind) {
            capture.pointee.begin(
                field: field, depth: depth, kind: kind, limit: options.maxFieldBytes, line: currentLine)
        }
        let line = currentLine
        let base = baseStack.last?.base
        switch namespace {
        case .none where format == .atom:
            startAtomChild(name: name, parent: parent, attributes: attributes)  // an Atom feed without xmlns
        case .none, .rss10:
            switch name {
            case "title": captureField(.title, .maybeHTML)
            case "link": captureField(.link, .plain)
            case "guid":
                item!.guidIsPermaLink = attributes.value(name: "isPermaLink")?.lowercased() != "false"
                captureField(.guid, .plain)
            case "description": captureField(.description, .html)
            case "author": captureField(.author, .plain)
            case "pubDate": captureField(.pubDate, .plain)
            case "enclosure":
                item!.images.append(
                    RawImage(
                        origin: "enclosure", url: attributes.value(name: "url") ?? "",
                        type: attributes.value(name: "type"), base: base, line: line))
            default: break
            }
        case .atom10, .atom03:
            startAtomChild(name: name, parent: parent, attributes: attributes)
        case .media:
            switch name {
            case "content":
                item!.images.append(
                    RawImage(
                        origin: "media:content", url: attributes.value(name: "url") ?? "",
                        width: attributes.value(name: "width"), height: attributes.value(name: "height"),
                        type: attributes.value(name: "type"), medium: attributes.value(name: "medium"),
                        isDefault: attributes.value(name: "isDefault")?.lowercased() == "true", base: base, line: line))
            case "thumbnail":
                item!.images.append(
                    RawImage(
                        origin: "media:thumbnail", url: attributes.value(name: "url") ?? "",
                        width: attributes.value(name: "width"), height: attributes.value(name: "height"),
                        base: base, line: line))
            case "description":
                captureField(.mediaDescription, attributes.value(name: "type") == "html" ? .html : .plain)
            case "credit": captureField(.mediaCredit, .plain)
            case "title": captureField(.mediaTitle, attributes.value(name: "type") == "html" ? .html : .plain)
            default: break
            }
        case .dc:
            switch name {
            case "creator": captureField(.dcCreator, .plain)
            case "date": captureField(.dcDate, .plain)
            case "identifier": captureField(.dcIdentifier, .plain)
            case "title": captureField(.title, .plain)
            case "description": captureField(.description, .html)
            default: break
            }
        case .dcterms:
            switch name {
            case "created": captureField(.created, .plain)
            case "modified": captureField(.modified, .plain)
            case "issued": captureField(.issued, .plain)
            default: break
            }
        case .content:
            if name == "encoded" { captureField(.contentEncoded, .html) }
        case .itunes:
            switch name {
            case "image":
                if let href = attributes.value(name: "href") {
                    item!.images.append(RawImage(origin: "itunes:image", url: href, base: base, line: line))
                }
            case "author": captureField(.itunesAuthor, .plain)
            case "summary": captureField(.summary, .plain)
            default: break
            }
        case .feedLayout:
            switch name {
            case "span": captureField(.layoutSpan, .plain)
            case "section": captureField(.layoutSection, .plain)
            default: break
            }
        case .rdf, .xml, .other:
            break
        }
    }

    private func startAtomChild(name: String, parent: (namespace: Namespace, name: String)?, attributes: Attributes) {
        func captureField(_ field: ItemField, _ kind: TextKind) {
            capture.pointee.begin(
                field: field, depth: depth, kind: kind, limit: options.maxFieldBytes, line: currentLine)
        }
        switch name {
        case "title": captureField(.title, textKind(attributes, default: .plain))
        case "id": captureField(.atomID, .plain)
        case "summary": captureField(.summary, textKind(attributes, default: .plain))
        case "content":
            // Atom 0.3 says mode="escaped"; 1.0 says type="html". A src= content has no text.
            if attributes.value(name: "src") == nil {
                let kind = attributes.value(name: "mode") == "escaped" ? .html : textKind(attributes, default: .plain)
                captureField(.atomContent, kind)
            }
        case "published": captureField(.published, .plain)
        case "issued": captureField(.issued, .plain)
        case "updated": captureField(.updated, .plain)
        case "modified": captureField(.modified, .plain)
        case "created": captureField(.created, .plain)
        case "name":
            if parent?.name == "author" { captureField(.atomAuthorName, .plain) }
        case "link":
            let relation = (attributes.value(name: "rel") ?? "alternate").lowercased()
            guard let href = attributes.value(name: "href") else { return }
            if relation == "alternate" {
                if item!.alternateLink == nil {
                    // The link's own xml:base applies to its href.
                    item!.alternateLink = resolver.resolveLink(href, bases: [baseStack.last?.base])
                }
            } else if relation == "enclosure" {
                item!.images.append(
                    RawImage(
                        origin: "atom:link", url: href, type: attributes.value(name: "type"),
                        base: baseStack.last?.base, line: currentLine))
            }
        default:
            break
        }
    }

    private func textKind(_ attributes: Attributes, default defaultKind: TextKind) -> TextKind {
        switch attributes.value(name: "type")?.lowercased() {
        case "html", "text/html": return .html
        case "xhtml", "application/xhtml+xml": return .xhtml
        case "text", "text/plain": return .plain
        case nil: return defaultKind
        default: return defaultKind
        }
    }

    private func isItemElement(_ namespace: Namespace, _ name: String) -> Bool {
        switch format {
        case .atom: return name == "entry" && (namespace == .atom10 || namespace == .atom03 || namespace == .none)
        case .rss, .rdf: return name == "item" && (namespace == .none || namespace == .rss10)
        default: return false
        }
    }

    fileprivate func endElement(localName: UnsafePointer<xmlChar>) {
        attributeRepairsIfAny()
        defer {
            if let last = baseStack.last, last.depth == depth { baseStack.removeLast() }
            if !elementNames.isEmpty { elementNames.removeLast() }
            depth -= 1
            if depth == 0 { rootClosed = true }
        }
        if capture.pointee.isActive {
            if depth > capture.pointee.depth {
                capture.pointee.appendEndTag(name: self.name(localName))
                return
            }
            capture.pointee.isActive = false
            let capture = self.capture.pointee
            if let field = capture.field {
                if capture.truncated {
                    warn(
                        code: "field-truncated",
                        message: "a text field longer than \(options.maxFieldBytes) bytes was cut", line: currentLine,
                        column: nil)
                }
                item?.set(field, capture.bytes, kind: capture.kind, line: capture.line)
            } else if !feedTitleSeen {
                feedTitleSeen = true
                let isMarkup =
                    capture.kind == .html || capture.kind == .xhtml
                    || (capture.kind == .maybeHTML && HTMLTextConverter.looksLikeHTML(capture.bytes))
                let converted =
                    isMarkup
                    ? converter.convert(capture.bytes, collectImages: false).text
                    : HTMLTextConverter.collapseWhitespace(capture.bytes)
                feedTitle = converted.isEmpty ? nil : converted
            }
            if depth != itemDepth { return }
        }
        if let skipped = skippedDepth, depth <= skipped { skippedDepth = nil }
        if item != nil && depth <= itemDepth {
            closeItem()
        }
    }

    private func closeItem() {
        guard let builder = item.take() else { return }
        capture.pointee.isActive = false
        skippedDepth = nil
        completed.append(CapturedFeedItem(raw: builder, index: nextIndex))
        nextIndex += 1
    }

    fileprivate func characters(_ bytes: UnsafePointer<xmlChar>, count: Int) {
        attributeRepairsIfAny()
        guard capture.pointee.isActive else { return }
        capture.pointee.appendText(UnsafeBufferPointer(start: bytes, count: count))
    }

    fileprivate func reference(_ name: UnsafePointer<xmlChar>) {
        guard capture.pointee.isActive, let parser else { return }
        if let entity = xmlGetDocEntity(parser.pointee.myDoc, name) {
            // libxml2 has already delivered an internal entity's replacement text as events;
            // external ones are never loaded (XXE), which deserves a warning.
            if entity.pointee.etype != XML_INTERNAL_GENERAL_ENTITY {
                warn(
                    code: "external-entity", message: "external entity '\(String(cString: name))' was not loaded",
                    line: currentLine, column: nil)
            }
            return
        }
        // An undeclared entity stays as written, as feedparser leaves unknown entities.
        var literal: [UInt8] = [UInt8(ascii: "&")]
        var pointer = name
        while pointer.pointee != 0 {
            literal.append(pointer.pointee)
            pointer += 1
        }
        literal.append(UInt8(ascii: ";"))
        literal.withUnsafeBufferPointer { capture.pointee.appendText($0) }
    }

    private var currentLine: Int? {
        guard let parser else { return nil }
        let line = xmlSAX2GetLineNumber(parser)
        return line > 0 ? Int(line) : nil
    }

    // MARK: Names

    private func name(_ pointer: UnsafePointer<xmlChar>) -> String {
        let key = UnsafeRawPointer(pointer)
        // libxml2 interns names in its dictionary, so pointers repeat. They are packed, not
        // aligned: a multiplicative hash spreads neighbours over the slots.
        let slot = Int(truncatingIfNeeded: (UInt64(UInt(bitPattern: key)) &* 0x9E37_79B9_7F4A_7C15) >> 55)
        if nameCache[slot].key == key { return nameCache[slot].name }
        let value = String(cString: pointer)
        nameCache[slot] = (key, value)
        return value
    }

    fileprivate func namespace(uri: UnsafePointer<xmlChar>?, prefix: UnsafePointer<xmlChar>?) -> Namespace {
        guard let uri else {
            // An undeclared well-known prefix ("media:content" with no xmlns:media) is common.
            guard let prefix else { return .none }
            return Namespace(undeclaredPrefix: String(cString: prefix))
        }
        let key = UnsafeRawPointer(uri)
        if let cached = namespaceCache[key] { return cached }
        let value = Namespace(uri: String(cString: uri))
        if namespaceCache.count < 256 { namespaceCache[key] = value }
        return value
    }

    // MARK: C callbacks

    /// Calls `body` with the reader behind a parser context, without retaining it: the reader owns
    /// the parser and outlives every callback, and a retain/release pair per SAX event (there
    /// are several per element) is measurable on a large feed.
    @inline(__always)
    private static func withReader(_ context: UnsafeMutableRawPointer?, _ body: (FeedReader) -> Void) {
        guard let context else { return }
        let parser = context.assumingMemoryBound(to: xmlParserCtxt.self)
        guard let opaque = parser.pointee._private else { return }
        Unmanaged<FeedReader>.fromOpaque(opaque)._withUnsafeGuaranteedRef(body)
    }

    private static let startElementCallback: startElementNsSAX2Func = {
        context, localName, prefix, uri, _, _, attributeCount, _, attributes in
        guard let localName else { return }
        withReader(context) { reader in
            reader.startElement(
                localName: localName, prefix: prefix, uri: uri, attributeCount: Int(attributeCount),
                attributes: attributes)
        }
    }

    private static let endElementCallback: endElementNsSAX2Func = { context, localName, _, _ in
        guard let localName else { return }
        withReader(context) { $0.endElement(localName: localName) }
    }

    private static let charactersCallback: charactersSAXFunc = { context, bytes, count in
        guard let bytes, count > 0 else { return }
        withReader(context) { $0.characters(bytes, count: Int(count)) }
    }

    private static let referenceCallback: referenceSAXFunc = { context, name in
        guard let name else { return }
        withReader(context) { $0.reference(name) }
    }

    private static let structuredErrorCallback: xmlStructuredErrorFunc = { context, error in
        guard let error else { return }
        withReader(context) { $0.handleError(error) }
    }
}

/// The text being collected for one field. One per reader, reused for every field: its buffer
/// is allocated once (a class and a buffer per captured field showed up in profiles).
struct Capture {
    /// Whether a field is being collected.
    var isActive = false
    private(set) var field: ItemField?
    private(set) var depth = 0
    private(set) var kind = TextKind.plain
    private(set) var limit = 0
    /// The line the element starts on, for warnings about its value.
    private(set) var line: Int?
    /// The text so far: libxml2 delivers text in many small pieces (one per character reference).
    private var storage: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private var count = 0
    private(set) var truncated = false

    /// A buffer larger than this is given back when the next field begins (one huge field must
    /// not keep its memory for the rest of the feed).
    private static let keptCapacity = 1 << 16

    /// The text collected, as a new array.
    var bytes: [UInt8] { Array(UnsafeBufferPointer(start: storage, count: count)) }

    init() {
        capacity = 256
        storage = .allocate(capacity: capacity)
    }

    /// Frees the buffer (the owner calls this once, before deallocating).
    func release() {
        storage.deallocate()
    }

    /// Starts collecting a field's text.
    mutating func begin(field: ItemField?, depth: Int, kind: TextKind, limit: Int, line: Int?) {
        isActive = true
        self.field = field
        self.depth = depth
        self.kind = kind
        self.limit = limit
        self.line = line
        count = 0
        truncated = false
        if capacity > Self.keptCapacity {
            storage.deallocate()
            capacity = 256
            storage = .allocate(capacity: capacity)
        }
    }

    mutating func appendText(_ text: UnsafeBufferPointer<UInt8>) {
        guard kind == .xhtml else {
            append(text)
            return
        }
        // Inline XHTML text was already unescaped by the XML parser; escape it again for the
        // HTML parser that reads the rebuilt markup.
        var escaped: [UInt8] = []
        escaped.reserveCapacity(text.count)
        for byte in text {
            switch byte {
            case UInt8(ascii: "<"): escaped.append(contentsOf: Array("&lt;".utf8))
            case UInt8(ascii: "&"): escaped.append(contentsOf: Array("&amp;".utf8))
            default: escaped.append(byte)
            }
        }
        escaped.withUnsafeBufferPointer { append($0) }
    }

    /// Markup nested in a captured field is kept as markup (Atom XHTML, or raw XHTML pasted into an
    /// RSS description), so that the HTML converter sees paragraphs and images.
    mutating func appendStartTag(name: String, attributes: Attributes) {
        var tag = "<" + name
        for (attributeName, value) in attributes.all() {
            tag += " " + attributeName + "=\""
            for character in value.unicodeScalars {
                switch character {
                case "\"": tag += "&quot;"
                case "&": tag += "&amp;"
                case "<": tag += "&lt;"
                default: tag.unicodeScalars.append(character)
                }
            }
            tag += "\""
        }
        tag += ">"
        var utf8 = Array(tag.utf8)
        utf8.withUnsafeMutableBufferPointer { append(UnsafeBufferPointer($0)) }
    }

    mutating func appendEndTag(name: String) {
        let utf8 = Array("</\(name)>".utf8)
        utf8.withUnsafeBufferPointer { append($0) }
    }

    private mutating func append(_ text: UnsafeBufferPointer<UInt8>) {
        let room = max(0, limit - count)
        let taken = min(text.count, room)
        if taken < text.count { truncated = true }
        guard taken > 0, let source = text.baseAddress else { return }
        let needed = count + taken
        if needed > capacity {
            let grown = max(needed, capacity * 2)
            let larger = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
            larger.update(from: storage, count: count)
            storage.deallocate()
            storage = larger
            capacity = grown
        }
        (storage + count).update(from: source, count: taken)
        count = needed
    }
}

/// The SAX2 attribute array: five pointers per attribute (local name, prefix, URI, value start,
/// value end).
struct Attributes {
    let pointer: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
    let count: Int
    /// Unowned and unchecked: an `Attributes` lives only inside the reader's own SAX callback, and
    /// a checked unowned reference cost a reference-count operation per element.
    unowned(unsafe) let reader: FeedReader

    /// The value of the attribute with this local name in this namespace (`.none`: unprefixed).
    func value(namespace: Namespace = .none, name: String) -> String? {
        guard let pointer else { return nil }
        for index in 0..<count {
            let base = index * 5
            guard let localName = pointer[base] else { continue }
            guard Self.equals(localName, name),
                reader.namespace(uri: pointer[base + 2], prefix: pointer[base + 1]) == namespace
            else { continue }
            return Self.value(pointer[base + 3], pointer[base + 4])
        }
        return nil
    }

    /// Every attribute as (qualified name, value).
    func all() -> [(String, String)] {
        guard let pointer else { return [] }
        var result: [(String, String)] = []
        for index in 0..<count {
            let base = index * 5
            guard let localName = pointer[base] else { continue }
            var name = String(cString: localName)
            if let prefix = pointer[base + 1] { name = String(cString: prefix) + ":" + name }
            result.append((name, Self.value(pointer[base + 3], pointer[base + 4]) ?? ""))
        }
        return result
    }

    private static func equals(_ pointer: UnsafePointer<xmlChar>, _ name: String) -> Bool {
        var index = 0
        for byte in name.utf8 {
            if pointer[index] != byte { return false }
            index += 1
        }
        return pointer[index] == 0
    }

    private static func value(_ start: UnsafePointer<xmlChar>?, _ end: UnsafePointer<xmlChar>?) -> String? {
        guard let start, let end else { return nil }
        let bytes = UnsafeBufferPointer(start: start, count: end - start)
        // Without entity substitution libxml2 hands "&" in attribute values over as "&#38;".
        guard bytes.contains(UInt8(ascii: "&")) else { return String(decoding: bytes, as: UTF8.self) }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "&"), index + 4 < bytes.count, bytes[index + 1] == UInt8(ascii: "#"),
                bytes[index + 2] == UInt8(ascii: "3"), bytes[index + 3] == UInt8(ascii: "8"),
                bytes[index + 4] == UInt8(ascii: ";")
            {
                decoded.append(UInt8(ascii: "&"))
                index += 5
            } else {
                decoded.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: decoded, as: UTF8.self)
    }
}

/// The namespaces FeedLayout understands, matched by URI.
enum Namespace: Equatable {
    case none, rss10, atom10, atom03, media, dc, dcterms, content, itunes, rdf, xml, feedLayout, other

    /// RSS and Atom core elements (as opposed to extensions).
    var isCore: Bool { self == .none || self == .rss10 || self == .atom10 || self == .atom03 }

    init(uri: String) {
        var normalised = Substring(uri.lowercased())
        for scheme in ["http://", "https://"] where normalised.hasPrefix(scheme) {
            normalised = normalised.dropFirst(scheme.count)
        }
        while normalised.last == "/" || normalised.last == "#" { normalised = normalised.dropLast() }
        if normalised.hasPrefix("www.") { normalised = normalised.dropFirst(4) }
        switch normalised {
        case "purl.org/rss/1.0", "my.netscape.com/rdf/simple/0.9", "backend.userland.com/rss2",
            "backend.userland.com/rss":
            self = .rss10
        case "w3.org/2005/atom": self = .atom10
        case "purl.org/atom/ns": self = .atom03
        case "search.yahoo.com/mrss", "video.search.yahoo.com/mrss", "tools.search.yahoo.com/mrss": self = .media
        case "purl.org/dc/elements/1.1": self = .dc
        case "purl.org/dc/terms": self = .dcterms
        case "purl.org/rss/1.0/modules/content": self = .content
        case "itunes.com/dtds/podcast-1.0.dtd": self = .itunes
        case "w3.org/1999/02/22-rdf-syntax-ns": self = .rdf
        case "w3.org/xml/1998/namespace": self = .xml
        case "urn:feedlayout:1": self = .feedLayout
        default: self = .other
        }
    }

    /// The conventional meaning of a prefix a feed used without declaring it.
    init(undeclaredPrefix prefix: String) {
        switch prefix.lowercased() {
        case "media": self = .media
        case "dc": self = .dc
        case "dcterms": self = .dcterms
        case "content": self = .content
        case "itunes": self = .itunes
        case "atom", "atom10": self = .atom10
        case "rdf": self = .rdf
        case "xml": self = .xml
        default: self = .other
        }
    }
}
