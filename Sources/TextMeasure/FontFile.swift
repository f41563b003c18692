extension TextStyle {
    /// The font file this style measures with: the path it names, or the face fontconfig picks for its family
    /// and weight — the file a preview loads through `@font-face` so a browser renders with the very same font.
    ///
    /// - Throws: ``TextMeasureError`` when the family is not installed.
    public func resolvedFontFile() throws(TextMeasureError) -> (path: String, faceIndex: Int) {
        if isFontFilePath {
            return (font, 0)
        }
        let location = try FontCatalog.locate(family: font, weight: weight)
        return (location.path, location.faceIndex)
    }

    /// Whether `font` names a file rather than a family.
    var isFontFilePath: Bool {
        font.contains("/") || [".ttf", ".otf", ".ttc", ".otc"].contains(where: { font.lowercased().hasSuffix($0) })
    }
}
