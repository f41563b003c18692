import ByteTools
internal import CFeedLayoutShims
internal import CLibXML2

/// The reader's side of libxml2: creating the push parser, handing it bytes, and the C callbacks
/// that bring its SAX events and errors back to the reader.
extension FeedReader {
    /// Creates the push parser for an XML feed, with the sanitizer when the encoding allows one.
    /// - Parameter encoding: who decodes the feed's characters (see ``FeedEncoding``).
    func startParsing(encoding: FeedEncoding) throws(FeedIngestError) {
        sanitizing = encoding.sanitizerDecoding.map { SanitizingStream(InputSanitizer(decoding: $0)) }
        var options = Int32(XML_PARSE_RECOVER.rawValue | XML_PARSE_NONET.rawValue | XML_PARSE_NOCDATA.rawValue)
        if sanitizing != nil { options |= Int32(XML_PARSE_IGNORE_ENC.rawValue) }
        // Nothing in the document names a transport-declared encoding for libxml2: say it.
        let transportLabel: String?
        if case .decodedByLibxml2(let label) = encoding { transportLabel = label } else { transportLabel = nil }
        try createParser(options: options, encoding: transportLabel)
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
    func feed(_ bytes: UnsafeBufferPointer<UInt8>, isFinal: Bool) throws(FeedIngestError) {
        guard let parser, !hasStoppedParsing else { return }
        if sanitizing != nil {
            let clean = sanitizing!.clean(bytes, isFinal: isFinal, repairs: &pendingRepairs.repairs)
            clean.withUnsafeBufferPointer { parseSanitized($0, isFinal: isFinal, parser: parser) }
        } else {
            parse(bytes, isFinal: isFinal, parser: parser)
            noteIfHalted(parser, isFinal: isFinal)
        }
    }

    /// Parses bytes the detached sanitizer cleaned.
    func parse(sanitized chunk: SanitizedChunk) {
        inputByteCount = chunk.inputByteCount
        guard let parser, !hasStoppedParsing else { return }
        pendingRepairs.repairs.append(contentsOf: chunk.repairs)
        chunk.bytes.withUnsafeBufferPointer { parseSanitized($0, isFinal: chunk.isFinal, parser: parser) }
    }

    /// Parses clean bytes whose repairs are already in `pendingRepairs`, handing each repair to the item the
    /// parser is in when it gets there (the rest at the end of the input).
    private func parseSanitized(_ bytes: UnsafeBufferPointer<UInt8>, isFinal: Bool, parser: xmlParserCtxtPtr) {
        if pendingRepairs.hasWaiting { repairsWaiting.pointee = true }
        parse(bytes, isFinal: isFinal, parser: parser)
        // Also after each chunk, not only at SAX events: a long run of dropped bytes makes no event,
        // and its repairs would otherwise wait, and pile up, until the next tag.
        attributeRepairs(upTo: isFinal ? Int.max : Int(xmlByteConsumed(parser)))
        noteIfHalted(parser, isFinal: isFinal)
    }

    /// libxml2 halts for good on a few errors even in recovery mode (a `<` that starts no tag name, junk
    /// after the root): from then on it takes no input, so the reader stops reading it too, rather than
    /// sanitizing the rest and keeping its repairs, which no parser position would ever pass.
    private func noteIfHalted(_ parser: xmlParserCtxtPtr, isFinal: Bool) {
        guard !isFinal, failure == nil, parser.pointee.instate == XML_PARSER_EOF else { return }
        hasStoppedParsing = true
        // Repairs past the point where it stopped (those before it were handed out) are in input no one reads.
        pendingRepairs.removeAll()
        repairsWaiting.pointee = false
        // After the root's end tag that is the usual end of a feed (reported as `garbageAfterRoot`).
        guard !rootClosed else { return }
        warn(
            code: "parsingStopped",
            message:
                "libxml2 cannot go on after the error before this point; the rest of the input was not read",
            line: Int(xmlSAX2GetLineNumber(parser)), column: nil)
    }

    private func parse(_ bytes: UnsafeBufferPointer<UInt8>, isFinal: Bool, parser: xmlParserCtxtPtr) {
        // libxml2 takes an Int32 length: very large chunks go in pieces.
        let step = 1 << 24
        var offset = 0
        // Errors without a parser context (iconv failures) would go to the thread's generic
        // handler, which prints to stderr: route them to this reader while it parses.
        var savedHandlers = fl_xml_error_scope()
        fl_xml_error_scope_enter(&savedHandlers, UnsafeMutableRawPointer(parser), FeedReader.structuredErrorCallback)
        defer { fl_xml_error_scope_leave(&savedHandlers) }
        bytes.withMemoryRebound(to: CChar.self) { chars in
            repeat {
                let length = min(step, chars.count - offset)
                let last = isFinal && offset + length == chars.count
                if failure != nil { return }
                _ = xmlParseChunk(parser, chars.baseAddress.map { $0 + offset }, Int32(length), last ? 1 : 0)
                offset += length
            } while offset < chars.count
        }
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
