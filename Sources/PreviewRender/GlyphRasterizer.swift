internal import CFreeType
import TextMeasure

/// Draws shaped lines with FreeType: grey-scale anti-aliased outlines with light (vertical-only) hinting,
/// placed at quarter-pixel horizontal positions, and colour bitmap glyphs (emoji) scaled from their strike.
///
/// Not thread-safe: FreeType faces carry state. One rasteriser draws one canvas.
final class GlyphRasterizer {
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

    /// A rendered glyph: a coverage mask, or premultiplied RGBA for colour glyphs.
    private struct Bitmap {
        var left: Int
        var top: Int
        var width: Int
        var height: Int
        var coverage: [UInt8]?
        var rgba: [UInt8]?
    }

    private struct LoadedFace {
        var face: FT_Face
        /// For bitmap-only faces: the strike's pixel size over the wanted one (they are scaled down).
        var bitmapScale: Double?
    }

    private var library: FT_Library?
    private var faceIDs: [FaceKey: Int] = [:]
    private var faces: [LoadedFace?] = []
    private var glyphs: [GlyphKey: Bitmap?] = [:]

    init() throws(PreviewRenderError) {
        var library: FT_Library?
        guard FT_Init_FreeType(&library) == 0, library != nil else {
            throw PreviewRenderError("FreeType failed to initialise")
        }
        self.library = library
    }

    deinit {
        for case let loaded? in faces { FT_Done_Face(loaded.face) }
        FT_Done_FreeType(library)
    }

    /// Draws `line` with its left edge at `x` and its baseline at `baseline` (device pixels), every glyph
    /// position multiplied by `scale`, the glyphs rendered at `size × scale` pixels, inside `clip`.
    func draw(
        _ line: GlyphLine, size: Double, scale: Double, x: Double, baseline: Double, color: RGBColor,
        into canvas: inout Canvas, clip: ClipRect
    ) {
        let pixelSize = Int((size * scale * 64).rounded())
        for run in line.runs {
            guard let face = faceID(FaceKey(path: run.fontPath, faceIndex: run.faceIndex, size: pixelSize)) else {
                continue
            }
            for glyph in run.glyphs {
                let penX = x + glyph.x * scale
                let penY = baseline + glyph.y * scale
                let wholeX = penX.rounded(.down)
                let subpixel = min(3, Int(((penX - wholeX) * 4).rounded(.down)))
                let key = GlyphKey(face: face, glyph: glyph.glyph, subpixel: subpixel)
                let bitmap: Bitmap?
                if let cached = glyphs[key] {
                    bitmap = cached
                } else {
                    bitmap = render(key)
                    glyphs[key] = .some(bitmap)
                }
                guard let bitmap, bitmap.width > 0, bitmap.height > 0 else { continue }
                let left = Int(wholeX) + bitmap.left
                let top = Int(penY.rounded()) - bitmap.top
                if let coverage = bitmap.coverage {
                    canvas.blendMask(
                        coverage, maskWidth: bitmap.width, maskHeight: bitmap.height, x: left, y: top, color: color,
                        clip: clip)
                } else if let rgba = bitmap.rgba {
                    canvas.composite(
                        premultiplied: rgba, imageWidth: bitmap.width, imageHeight: bitmap.height, x: left, y: top,
                        clip: clip)
                }
            }
        }
    }

    private func faceID(_ key: FaceKey) -> Int? {
        if let id = faceIDs[key] { return faces[id] == nil ? nil : id }
        let id = faces.count
        faceIDs[key] = id
        faces.append(open(key))
        return faces[id] == nil ? nil : id
    }

    private func open(_ key: FaceKey) -> LoadedFace? {
        var handle: FT_Face?
        guard FT_New_Face(library, key.path, FT_Long(key.faceIndex), &handle) == 0, let face = handle else {
            return nil
        }
        let isScalable = (face.pointee.face_flags & FT_Long(FT_FACE_FLAG_SCALABLE)) != 0
        if isScalable {
            guard FT_Set_Char_Size(face, 0, FT_F26Dot6(key.size), 72, 72) == 0 else {
                FT_Done_Face(face)
                return nil
            }
            return LoadedFace(face: face, bitmapScale: nil)
        }
        // A bitmap-only face (colour emoji): take the smallest strike at least as big, scale it down.
        let count = Int(face.pointee.num_fixed_sizes)
        guard count > 0, let strikes = face.pointee.available_sizes else {
            FT_Done_Face(face)
            return nil
        }
        let index = (0..<count).first { Int(strikes[$0].y_ppem) >= key.size } ?? (count - 1)
        guard FT_Select_Size(face, FT_Int(index)) == 0, strikes[index].y_ppem > 0 else {
            FT_Done_Face(face)
            return nil
        }
        return LoadedFace(face: face, bitmapScale: Double(key.size) / Double(strikes[index].y_ppem))
    }

    private func render(_ key: GlyphKey) -> Bitmap? {
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
        return Bitmap(
            left: Int(slot.pointee.bitmap_left), top: Int(slot.pointee.bitmap_top), width: width, height: height,
            coverage: coverage, rgba: nil)
    }

    /// A premultiplied BGRA strike glyph, area-averaged down by `scale`, as premultiplied RGBA.
    private func scaledColorBitmap(_ slot: FT_GlyphSlotRec, scale: Double) -> Bitmap? {
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
        return Bitmap(
            left: Int((Double(slot.bitmap_left) * scale).rounded()),
            top: Int((Double(slot.bitmap_top) * scale).rounded()),
            width: width, height: height, coverage: nil, rgba: rgba)
    }
}
