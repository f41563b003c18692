/// Which element of an item fills which field, per namespace: the start tags inside an item
/// either begin capturing a field's text or add an image candidate.
extension FeedReader {
    /// The element that starts an item in this feed's format.
    func isItemElement(_ namespace: Namespace, _ name: ElementName) -> Bool {
        switch format {
        case .atom: return name == .entry && (namespace == .atom10 || namespace == .atom03 || namespace == .none)
        case .rss, .rdf: return name == .item && (namespace == .none || namespace == .rss10)
        default: return false
        }
    }

    /// Handles a start tag inside an item (not inside a captured field or a skipped Atom `<source>`).
    func startItemChild(
        namespace: Namespace, name: ElementName, parent: OpenElement?,
        attributes: Attributes
    ) {
        // The core vocabulary's fields are the item's own children (and an Atom author's name): a
        // <title> or <link> inside an unknown element (<image><title>) describes that element.
        let isOwnChild = depth == itemDepth + 1
        switch namespace {
        case .none where format == .atom:
            // An Atom feed without xmlns.
            if isOwnChild || isAuthorName(name, parent) {
                startAtomChild(name: name, parent: parent, attributes: attributes)
            }
        case .none, .rss10:
            if isOwnChild { startRSSChild(name: name, attributes: attributes) }
        case .atom10, .atom03:
            if isOwnChild || isAuthorName(name, parent) {
                startAtomChild(name: name, parent: parent, attributes: attributes)
            }
        case .media:
            startMediaChild(name: name, parent: parent, attributes: attributes)
        case .dc:
            switch name {
            case .creator: beginCapture(.dcCreator, .plain)
            case .date: beginCapture(.dcDate, .plain)
            case .identifier: beginCapture(.dcIdentifier, .plain)
            case .title: beginCapture(.title, .plain)
            case .description: beginCapture(.description, .html)
            default: break
            }
        case .dcterms:
            switch name {
            case .created: beginCapture(.created, .plain)
            case .modified: beginCapture(.modified, .plain)
            case .issued: beginCapture(.issued, .plain)
            default: break
            }
        case .content:
            if name == .encoded { beginCapture(.contentEncoded, .html) }
        case .itunes:
            switch name {
            // `url=` instead of `href=`, and iTunes' older `<itunes:link rel="image">`, are common mistakes.
            case .image,
                .link where attributes.value(name: "rel") == "image":
                if let href = attributes.value(name: "href") ?? attributes.value(name: "url") {
                    item!.images.append(
                        RawImage(origin: "itunes:image", url: href, base: baseStack.last?.base, line: currentLine))
                }
            case .author: beginCapture(.itunesAuthor, .plain)
            case .summary: beginCapture(.summary, .plain)
            default: break
            }
        case .feedLayout:
            switch name {
            case .span: beginCapture(.layoutSpan, .plain)
            case .section: beginCapture(.layoutSection, .plain)
            default: break
            }
        case .rdf, .xml, .other:
            break
        }
    }

    /// An Atom `<author><name>` of the item itself.
    private func isAuthorName(_ name: ElementName, _ parent: OpenElement?) -> Bool {
        name == .name && parent?.name == .author && depth == itemDepth + 2
    }

    /// Starts capturing the text of an item's field.
    private func beginCapture(_ field: ItemField, _ kind: TextKind) {
        capture.pointee.begin(field: field, depth: depth, kind: kind, limit: options.maxFieldBytes, line: currentLine)
    }

    /// RSS 0.9x–2.0 and RSS 1.0 core elements.
    private func startRSSChild(name: ElementName, attributes: Attributes) {
        switch name {
        case .title: beginCapture(.title, .maybeHTML)
        case .link:
            // Atom's <link href> and <id> in an RSS item are read as in Atom (feedparser does the same).
            if attributes.value(name: "href") != nil {
                startAtomChild(name: name, parent: nil, attributes: attributes)
            } else {
                beginCapture(.link, .plain)
            }
        case .id: beginCapture(.atomID, .plain)
        case .guid:
            item!.guidIsPermaLink = attributes.value(name: "isPermaLink")?.equalsASCIIIgnoringCase("false") != true
            beginCapture(.guid, .plain)
        case .description: beginCapture(.description, .html)
        case .author: beginCapture(.author, .plain)
        case .pubDate: beginCapture(.pubDate, .plain)
        case .enclosure:
            item!.images.append(
                RawImage(
                    origin: "enclosure", url: attributes.value(name: "url") ?? "",
                    type: attributes.value(name: "type"), base: baseStack.last?.base, line: currentLine))
        default: break
        }
    }

    /// Media RSS: image candidates and their texts.
    private func startMediaChild(name: ElementName, parent: OpenElement?, attributes: Attributes) {
        // A description or title inside a media:content or media:thumbnail is also that image's alternative text.
        if name == .description || name == .title, let parent, parent.namespace == .media,
            parent.name == .content || parent.name == .thumbnail, let last = item?.images.indices.last
        {
            imageTextTarget = (last, name == .description)
        }
        switch name {
        case .content:
            let image = attributes.mediaImage()
            item!.images.append(
                RawImage(
                    origin: "media:content", url: image.url ?? "", width: image.width, height: image.height,
                    type: image.type, medium: image.medium,
                    isDefault: image.isDefault?.equalsASCIIIgnoringCase("true") == true, base: baseStack.last?.base,
                    line: currentLine))
        case .thumbnail:
            let image = attributes.mediaImage()
            item!.images.append(
                RawImage(
                    origin: "media:thumbnail", url: image.url ?? "", width: image.width, height: image.height,
                    base: baseStack.last?.base, line: currentLine))
        case .description:
            beginCapture(.mediaDescription, attributes.value(name: "type") == "html" ? .html : .plain)
        case .credit: beginCapture(.mediaCredit, .plain)
        case .title: beginCapture(.mediaTitle, attributes.value(name: "type") == "html" ? .html : .plain)
        default: break
        }
    }

    /// Atom 1.0 and 0.3 entry elements.
    private func startAtomChild(
        name: ElementName, parent: OpenElement?, attributes: Attributes
    ) {
        switch name {
        case .title: beginTextConstruct(.title, attributes)
        case .id: beginCapture(.atomID, .plain)
        case .summary: beginTextConstruct(.summary, attributes)
        case .content:
            // A src= content has no text.
            if attributes.value(name: "src") == nil { beginTextConstruct(.atomContent, attributes) }
        case .published: beginCapture(.published, .plain)
        case .issued: beginCapture(.issued, .plain)
        case .updated: beginCapture(.updated, .plain)
        case .modified: beginCapture(.modified, .plain)
        case .created: beginCapture(.created, .plain)
        case .name:
            if parent?.name == .author { beginCapture(.atomAuthorName, .plain) }
        case .link:
            let relation = (attributes.value(name: "rel") ?? "alternate").lowercased()
            guard let href = attributes.value(name: "href") else { return }
            if relation == "alternate" {
                if item!.alternateLink == nil {
                    // The link's own xml:base applies to its href.
                    item!.alternateLink = resolver.resolveLink(href, base: baseStack.last?.base)
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

    /// Starts capturing an Atom text construct. Atom 0.3 adds `mode`: `escaped` is 1.0's
    /// `type="html"`, and `base64` text is decoded before it is read as its `type` says. Atom 1.0
    /// content of a MIME type that is neither text nor XML is base64 (RFC 4287 section 4.1.3.3);
    /// feedparser reads titles so too.
    private func beginTextConstruct(_ field: ItemField, _ attributes: Attributes) {
        let mode = attributes.value(name: "mode")?.lowercased()
        let type = attributes.value(name: "type")?.lowercased() ?? ""
        let isBinaryType =
            type.utf8.contains(UInt8(ascii: "/")) && !type.hasPrefix("text/") && !type.hasSuffix("+xml") && !type.hasSuffix("/xml")
        if mode == "base64" || (mode == nil && isBinaryType) { item!.base64Field = field }
        beginCapture(field, mode == "escaped" ? .html : textKind(attributes, default: .plain))
    }

    /// An Atom text construct's kind from its `type` attribute.
    func textKind(_ attributes: Attributes, default defaultKind: TextKind) -> TextKind {
        switch attributes.value(name: "type")?.lowercased() {
        case "html", "text/html": return .html
        case "xhtml", "application/xhtml+xml": return .xhtml
        case "text", "text/plain": return .plain
        case nil: return defaultKind
        default: return defaultKind
        }
    }
}
