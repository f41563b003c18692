internal import CLibXML2

/// The SAX events: where the reader is in the document (depth, element names, `xml:base`),
/// when items open and close, and the text of the field being captured.
extension FeedReader {
    func startElement(
        localName: UnsafePointer<xmlChar>, prefix: UnsafePointer<xmlChar>?, uri: UnsafePointer<xmlChar>?,
        attributeCount: Int, attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
    ) {
        attributeRepairsIfAny()
        depth += 1
        let namespace = self.namespace(uri: uri, prefix: prefix)
        let name = elementName(localName)
        let parent = elementNames.last
        elementNames.append((namespace, name))
        let attributeList = Attributes(pointer: attributes, count: attributeCount, reader: self)

        if let xmlBase = attributeList.value(namespace: .xml, name: "base") {
            let resolved = resolver.resolveLink(xmlBase, base: baseStack.last?.base)
            baseStack.append((depth, resolved))
        }
        if !rootSeen {
            startRoot(namespace: namespace, name: self.name(localName))
        } else if capture.pointee.isActive {
            capture.pointee.appendStartTag(name: self.name(localName), attributes: attributeList)
        } else if isItemElement(namespace, name) {
            openItem(attributes: attributeList)
        } else if item == nil {
            startChannelChild(namespace: namespace, name: name, parent: parent, attributes: attributeList)
        } else if skippedDepth == nil {
            if name == .source
                && (namespace == .atom10 || namespace == .atom03 || (namespace == .none && format == .atom))
            {
                skippedDepth = depth
            } else {
                startItemChild(namespace: namespace, name: name, parent: parent, attributes: attributeList)
            }
        }
    }

    /// The root element names the format, or the reader fails.
    private func startRoot(namespace: Namespace, name: String) {
        rootSeen = true
        switch (namespace, name) {
        case (.none, "rss"), (.rss10, "rss"): format = .rss
        case (.rdf, "RDF"): format = .rdf
        case (.atom10, "feed"), (.atom03, "feed"), (.none, "feed"): format = .atom
        case (_, "html"), (_, "HTML"):
            fail(.htmlPage(source: sourceName, line: currentLine, column: nil))
        default:
            fail(
                FeedIngestError(
                    code: .unsupportedFormat,
                    message:
                        "the root element is <\(name)>, not <rss>, <rdf:RDF> or <feed>; this is XML but not a feed format FeedLayout reads",
                    source: sourceName, line: currentLine, column: nil))
        }
    }

    private func openItem(attributes: Attributes) {
        if item != nil {
            warn(
                code: "unclosedItem", message: "a new item started before the previous one closed",
                line: currentLine, column: nil)
            closeItem()
        }
        // Built in place: a local builder assigned to `item` was copied and destroyed.
        item = ItemBuilder()
        item!.base = baseStack.last?.base
        item!.about = attributes.value(namespace: .rdf, name: "about")
        itemDepth = depth
    }

    /// Channel level: only the feed's title matters here.
    private func startChannelChild(
        namespace: Namespace, name: ElementName, parent: OpenElement?,
        attributes: Attributes
    ) {
        guard !feedTitleSeen, name == .title, namespace.isCore,
            let parent, parent.name == .channel || (parent.name == .feed && depth == 2)
        else { return }
        let kind: TextKind = format == .atom ? textKind(attributes, default: .plain) : .maybeHTML
        capture.pointee.begin(field: nil, depth: depth, kind: kind, limit: options.maxFieldBytes, line: currentLine)
    }

    func endElement(localName: UnsafePointer<xmlChar>) {
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
            endCapture()
            if depth != itemDepth { return }
        }
        if let skipped = skippedDepth, depth <= skipped { skippedDepth = nil }
        if item != nil && depth <= itemDepth {
            closeItem()
        }
    }

    /// The captured field's element closed: its text goes to the item, or becomes the feed title.
    private func endCapture() {
        // Read through the pointer: a copy of the capture retained and released its buffer for every field.
        let capture = self.capture
        capture.pointee.isActive = false
        if let target = imageTextTarget {
            imageTextTarget = nil
            let bytes = capture.pointee.bytes
            let text =
                capture.pointee.kind == .plain
                ? HTMLTextConverter.collapseWhitespace(bytes) : converter.convert(bytes, collectImages: false).text
            if !text.isEmpty, item?.images.indices.contains(target.image) == true {
                if target.isDescription {
                    item?.images[target.image].altDescription = text
                } else {
                    item?.images[target.image].altTitle = text
                }
            }
        }
        if let field = capture.pointee.field {
            if capture.pointee.truncated {
                warn(
                    code: "fieldTruncated",
                    message: "a text field longer than \(options.maxFieldBytes) bytes was cut", line: currentLine,
                    column: nil)
            }
            capture.pointee.withBytes {
                item?.set(
                    field, $0, kind: capture.pointee.kind, line: capture.pointee.line, base: baseStack.last?.base)
            }
        } else if !feedTitleSeen {
            feedTitleSeen = true
            let kind = capture.pointee.kind
            let bytes = capture.pointee.bytes
            let isMarkup =
                kind == .html || kind == .xhtml || (kind == .maybeHTML && HTMLTextConverter.looksLikeHTML(bytes))
            let converted =
                isMarkup
                ? converter.convert(bytes, collectImages: false).text
                : HTMLTextConverter.collapseWhitespace(bytes)
            feedTitle = converted.isEmpty ? nil : converted
        }
    }

    /// Hands the item being read to `completed`.
    func closeItem() {
        guard let builder = item.take() else { return }
        capture.pointee.isActive = false
        skippedDepth = nil
        completed.append(CapturedFeedItem(raw: builder, index: nextIndex))
        nextIndex += 1
    }

    func characters(_ bytes: UnsafePointer<xmlChar>, count: Int) {
        attributeRepairsIfAny()
        guard capture.pointee.isActive else { return }
        capture.pointee.appendText(UnsafeBufferPointer(start: bytes, count: count))
    }

    func reference(_ name: UnsafePointer<xmlChar>) {
        guard capture.pointee.isActive, let parser else { return }
        if let entity = xmlGetDocEntity(parser.pointee.myDoc, name) {
            // libxml2 has already delivered an internal entity's replacement text as events;
            // external ones are never loaded (XXE), which deserves a warning.
            if entity.pointee.etype != XML_INTERNAL_GENERAL_ENTITY {
                warn(
                    code: "externalEntity", message: "external entity '\(String(cString: name))' was not loaded",
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

    /// The line libxml2 is on, for warnings.
    var currentLine: Int? {
        guard let parser else { return nil }
        let line = xmlSAX2GetLineNumber(parser)
        return line > 0 ? Int(line) : nil
    }

    // MARK: Names

    /// An element's name as the reader's dispatch knows it.
    private func elementName(_ pointer: UnsafePointer<xmlChar>) -> ElementName {
        nameCache[nameSlot(pointer)].element
    }

    /// An element's name as written (for messages, and markup kept inside a field).
    private func name(_ pointer: UnsafePointer<xmlChar>) -> String {
        nameCache[nameSlot(pointer)].name
    }

    /// The name cache's slot for a name, filled with it.
    @inline(__always)
    private func nameSlot(_ pointer: UnsafePointer<xmlChar>) -> Int {
        let key = UnsafeRawPointer(pointer)
        // libxml2 interns names in its dictionary, so pointers repeat. They are packed, not
        // aligned: a multiplicative hash spreads neighbours over the slots.
        let slot = Int(truncatingIfNeeded: (UInt64(UInt(bitPattern: key)) &* 0x9E37_79B9_7F4A_7C15) >> 55)
        if nameCache[slot].key != key {
            let value = String(cString: pointer)
            nameCache[slot] = (key, value, ElementName(value))
        }
        return slot
    }

    func namespace(uri: UnsafePointer<xmlChar>?, prefix: UnsafePointer<xmlChar>?) -> Namespace {
        guard let uri else {
            // An undeclared well-known prefix ("media:content" with no xmlns:media) is common.
            guard let prefix else { return .none }
            return Namespace(undeclaredPrefix: String(cString: prefix))
        }
        let key = UnsafeRawPointer(uri)
        if let last = lastNamespace, last.key == key { return last.namespace }
        let value: Namespace
        if let cached = namespaceCache[key] {
            value = cached
        } else {
            value = Namespace(uri: String(cString: uri))
            if namespaceCache.count < 256 { namespaceCache[key] = value }
        }
        lastNamespace = (key, value)
        return value
    }
}
