/// The element names the reader acts on, as small values: its dispatch on every start tag compares these rather
/// than strings. A name is mapped once per libxml2 dictionary entry (see `FeedReader.elementName(_:)`), and
/// names match exactly, case included, as the strings did.
enum ElementName: String {
    /// Any other name (no element is named with the empty string).
    case other = ""
    // Feed structure.
    case rss, RDF, feed, channel, item, entry, source
    // Item fields, in RSS, Atom and the extensions.
    case title, link, id, guid, description, author, pubDate, enclosure, summary, content, published, updated,
        issued, modified, created, name
    case thumbnail, credit, creator, date, identifier, encoded, image, span, section

    init(_ name: String) {
        self = ElementName(rawValue: name) ?? .other
    }
}
