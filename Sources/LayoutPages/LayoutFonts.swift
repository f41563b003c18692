import TextMeasure

/// The font files a layout measured its annotations with: the title's list and the caption's, each in the order a
/// character looks for its glyph (primary first). Pages record them (`layout.fonts`) so a client renders with the
/// same files, and their digests are part of every cursor's fingerprint, so a run with other fonts refuses it.
public struct LayoutFonts: Sendable, Hashable {
    public var title: [FontFace]
    public var caption: [FontFace]

    public init(title: [FontFace], caption: [FontFace]) {
        self.title = title
        self.caption = caption
    }

    /// Resolves both annotation styles' font lists; a font that is missing is the caller's to fix, named by its
    /// block.
    ///
    /// - Throws: `LayoutError.fontUnavailable`.
    public init(_ annotation: AnnotationStyle) throws(LayoutError) {
        func resolve(_ style: TextStyle, _ role: String) throws(LayoutError) -> [FontFace] {
            do {
                return try style.resolvedFonts()
            } catch {
                throw LayoutError(.fontUnavailable, "\(role) font: \(error)")
            }
        }
        self.init(title: try resolve(annotation.title, "title"), caption: try resolve(annotation.text, "caption"))
    }

    /// Every font with its block and place, in fingerprint order.
    var positions: [(role: String, position: Int, face: FontFace)] {
        title.enumerated().map { ("title", $0.offset, $0.element) }
            + caption.enumerated().map { ("caption", $0.offset, $0.element) }
    }

    /// The first 16 bits of each digest, in fingerprint order: what a cursor carries to name the font that differs.
    var tags: [Int] {
        positions.map { Int(UInt16(String($0.face.digest.dropFirst("sha256:".count).prefix(4)), radix: 16) ?? 0) }
    }

    /// The options' fingerprint with every font's digest added, in order.
    func fingerprint(combinedWith optionsFingerprint: UInt64) -> UInt64 {
        var hash = StableHash()
        hash.combine(String(optionsFingerprint, radix: 16))
        for entry in positions { hash.combine("|\(entry.role)|\(entry.face.digest)") }
        return hash.value
    }

    /// Why a cursor whose font tags are `tags` was made with other fonts, or nil when the fonts agree.
    func difference(fromTags tags: [Int]) -> String? {
        let own = self.tags
        for (index, entry) in positions.enumerated() where index >= tags.count || tags[index] != own[index] {
            let which = entry.position == 0 ? "primary font" : "fallback font \(entry.position)"
            return "the \(entry.role)'s \(which) differs: this run has \(entry.face.family) \(entry.face.style) "
                + "(\(entry.face.fileName), \(entry.face.digest))"
        }
        if tags.count > own.count {
            return "the cursor's run had \(tags.count) fonts, this one has \(own.count)"
        }
        return nil
    }
}
