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
