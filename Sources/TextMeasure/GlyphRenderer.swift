internal import CFreeType

/// A rendered glyph: a coverage mask, or premultiplied RGBA for colour glyphs, placed relative to the pen
/// position (`left` to the right of it, `top` above the baseline), in device pixels.
public struct GlyphBitmap: Sendable {
    public var left: Int
    public var top: Int
    public var width: Int
    public var height: Int
    /// `width * height` coverage values, for outline glyphs.
    public var coverage: [UInt8]?
    /// `width * height * 4` premultiplied RGBA bytes, for colour bitmap glyphs (emoji).
    public var rgba: [UInt8]?
}

/// Renders shaped glyphs with FreeType from the same font files measurement shapes with: grey-scale anti-aliased
/// outlines with light (vertical-only) hinting at quarter-pixel horizontal positions, and colour bitmap glyphs
/// (emoji) scaled down from their strike. Faces and glyphs are cached.
///
/// Not thread-safe: FreeType faces carry state. One renderer draws one picture.
public final class GlyphRenderer {
    private struct FaceKey: Hashable {
        var path: String
        var faceIndex: Int
        /// The pixel size in 1/64 px.
        var size: Int
    }

    private struct GlyphKey: Hashable {
        var face: Int
        var glyph: UInt32
        /// The horizontal position's fraction in quarter pixels, 0...3.
        var subpixel: Int
    }

    private struct LoadedFace {
        var face: FT_Face
        /// For bitmap-only faces: the strike's pixel size over the wanted one (they are scaled down).
        var bitmapScale: Double?
    }

    private let library: FreeTypeLibrary
    private var faceIDs: [FaceKey: Int] = [:]
    private var faces: [LoadedFace?] = []
    private var glyphs: [GlyphKey: GlyphBitmap?] = [:]

    /// - Throws: `TextMeasureError.libraryFailure` when FreeType cannot start.
    public init() throws(TextMeasureError) {
        library = try FreeTypeLibrary()
    }

    deinit {
        for case let loaded? in faces { FT_Done_Face(loaded.face) }
    }

    /// A face at one size, opened once: look it up per run of glyphs, not per glyph.
    public struct Face: Hashable, Sendable {
        fileprivate let id: Int
    }

    /// Face `faceIndex` of the font file at `fontPath`, sized to `pixelSize64` / 64 pixels; `nil` when FreeType
    /// cannot open or size it.
    public func face(fontPath: String, faceIndex: Int, pixelSize64: Int) -> Face? {
        faceID(FaceKey(path: fontPath, faceIndex: faceIndex, size: pixelSize64)).map(Face.init)
    }

    /// The glyph `glyph` of `face`, its pen position's fraction `subpixel` quarter pixels to the right; `nil` when
    /// the glyph cannot be rendered.
    public func bitmap(_ face: Face, glyph: UInt32, subpixel: Int) -> GlyphBitmap? {
        let key = GlyphKey(face: face.id, glyph: glyph, subpixel: subpixel)
        if let cached = glyphs[key] { return cached }
        let bitmap = render(key)
        glyphs[key] = .some(bitmap)
        return bitmap
    }

    private func faceID(_ key: FaceKey) -> Int? {
        if let id = faceIDs[key] { return faces[id] == nil ? nil : id }
        let id = faces.count
        faceIDs[key] = id
        faces.append(open(key))
        return faces[id] == nil ? nil : id
    }

    private func open(_ key: FaceKey) -> LoadedFace? {
        guard let face = try? library.openFace(path: key.path, faceIndex: key.faceIndex) else { return nil }
        let isScalable = (face.pointee.face_flags & FT_Long(FT_FACE_FLAG_SCALABLE)) != 0
        if isScalable {
            guard FT_Set_Char_Size(face, 0, FT_F26Dot6(key.size), 72, 72) == 0 else {
                FT_Done_Face(face)
                return nil
            }
            return LoadedFace(face: face, bitmapScale: nil)
        }
        // A bitmap-only face (colour emoji): take the smallest strike at least as big, scale it down.
        guard let strike = FreeTypeLibrary.selectStrike(of: face, atLeast: key.size) else {
            FT_Done_Face(face)
            return nil
        }
        return LoadedFace(face: face, bitmapScale: Double(key.size) / Double(strike))
    }

    private func render(_ key: GlyphKey) -> GlyphBitmap? {
        guard let loaded = faces[key.face] else { return nil }
        let face = loaded.face
        if let scale = loaded.bitmapScale {
            guard FT_Load_Glyph(face, key.glyph, FT_Int32(FT_LOAD_COLOR)) == 0, let slot = face.pointee.glyph else {
                return nil
            }
            return scaledColorBitmap(slot.pointee, scale: scale)
        }
        // Light hinting (what fontconfig's "hintslight" asks Chromium for): vertical only, so the
        // quarter-pixel horizontal offset survives.
        let lightTarget = FT_Int32((Int(FT_RENDER_MODE_LIGHT.rawValue) & 15) << 16)
        var delta = FT_Vector(x: FT_Pos(key.subpixel * 16), y: 0)
        FT_Set_Transform(face, nil, &delta)
        defer { FT_Set_Transform(face, nil, nil) }
        guard FT_Load_Glyph(face, key.glyph, lightTarget | FT_Int32(FT_LOAD_NO_BITMAP)) == 0,
            let slot = face.pointee.glyph, FT_Render_Glyph(slot, FT_RENDER_MODE_LIGHT) == 0
        else { return nil }
        let bitmap = slot.pointee.bitmap
        let width = Int(bitmap.width)
        let height = Int(bitmap.rows)
        var coverage = [UInt8](repeating: 0, count: width * height)
        if width > 0, height > 0, let buffer = bitmap.buffer, bitmap.pixel_mode == UInt8(FT_PIXEL_MODE_GRAY.rawValue) {
            for row in 0..<height {
                let source = buffer + row * Int(bitmap.pitch)
                for column in 0..<width { coverage[row * width + column] = source[column] }
            }
        }
        return GlyphBitmap(
            left: Int(slot.pointee.bitmap_left), top: Int(slot.pointee.bitmap_top), width: width, height: height,
            coverage: coverage, rgba: nil)
    }

    /// A premultiplied BGRA strike glyph, area-averaged down by `scale`, as premultiplied RGBA.
    private func scaledColorBitmap(_ slot: FT_GlyphSlotRec, scale: Double) -> GlyphBitmap? {
        let bitmap = slot.bitmap
        guard bitmap.pixel_mode == UInt8(FT_PIXEL_MODE_BGRA.rawValue), let buffer = bitmap.buffer else { return nil }
        let sourceWidth = Int(bitmap.width)
        let sourceHeight = Int(bitmap.rows)
        let width = max(1, Int((Double(sourceWidth) * scale).rounded()))
        let height = max(1, Int((Double(sourceHeight) * scale).rounded()))
        var rgba = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            let firstRow = y * sourceHeight / height
            let lastRow = max(firstRow + 1, (y + 1) * sourceHeight / height)
            for x in 0..<width {
                let firstColumn = x * sourceWidth / width
                let lastColumn = max(firstColumn + 1, (x + 1) * sourceWidth / width)
                var sums = (0, 0, 0, 0)
                for row in firstRow..<lastRow {
                    let source = buffer + row * Int(bitmap.pitch)
                    for column in firstColumn..<lastColumn {
                        sums.0 += Int(source[column * 4 + 2])
                        sums.1 += Int(source[column * 4 + 1])
                        sums.2 += Int(source[column * 4])
                        sums.3 += Int(source[column * 4 + 3])
                    }
                }
                let count = (lastRow - firstRow) * (lastColumn - firstColumn)
                let index = (y * width + x) * 4
                rgba[index] = UInt8(sums.0 / count)
                rgba[index + 1] = UInt8(sums.1 / count)
                rgba[index + 2] = UInt8(sums.2 / count)
                rgba[index + 3] = UInt8(sums.3 / count)
            }
        }
        return GlyphBitmap(
            left: Int((Double(slot.bitmap_left) * scale).rounded()),
            top: Int((Double(slot.bitmap_top) * scale).rounded()),
            width: width, height: height, coverage: nil, rgba: rgba)
    }
}
