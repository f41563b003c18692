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

    /// For a bitmap-only face (colour emoji): selects the smallest strike at least `pixelSize64` / 64 pixels tall
    /// (else the largest), as Skia does for Chromium, and returns its size in 1/64 px; `nil` when the face has no
    /// strikes or FreeType refuses the selection.
    static func selectStrike(of face: FT_Face, atLeast pixelSize64: Int) -> Int? {
        let count = Int(face.pointee.num_fixed_sizes)
        guard count > 0, let strikes = face.pointee.available_sizes else { return nil }
        let index = (0..<count).first { Int(strikes[$0].y_ppem) >= pixelSize64 } ?? (count - 1)
        guard FT_Select_Size(face, FT_Int(index)) == 0, strikes[index].y_ppem > 0 else { return nil }
        return Int(strikes[index].y_ppem)
    }
}
