internal import CFreeType

/// A FreeType library handle: the one place this package opens font files with FreeType, for measurement (the
/// face facts `LoadedFont` reads once) and for drawing (`GlyphRenderer`).
///
/// Not thread-safe: FreeType libraries and faces carry state; each user keeps its own.
final class FreeTypeLibrary {
    let handle: FT_Library

    init() throws(TextMeasureError) {
        var library: FT_Library?
        guard FT_Init_FreeType(&library) == 0, let library else {
            throw TextMeasureError(code: .libraryFailure, message: "FreeType failed to initialise")
        }
        handle = library
    }

    deinit { FT_Done_FreeType(handle) }

    /// Opens face `faceIndex` of the font file at `path`; the caller releases it with `FT_Done_Face`.
    ///
    /// - Throws: `TextMeasureError.fontFileUnreadable` naming the file.
    func openFace(path: String, faceIndex: Int) throws(TextMeasureError) -> FT_Face {
        var face: FT_Face?
        guard FT_New_Face(handle, path, FT_Long(faceIndex), &face) == 0, let face else {
            throw TextMeasureError(
                code: .fontFileUnreadable,
                message: "cannot open font file '\(path)' (face \(faceIndex)): check the path, "
                    + "or pass a family name such as \"DejaVu Sans\"")
        }
        return face
    }
}
