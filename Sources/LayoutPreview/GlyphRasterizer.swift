import TextMeasure

/// Draws shaped lines onto a canvas with the glyphs TextMeasure's `GlyphRenderer` renders (FreeType, the same
/// font files measurement used): outlines as coverage masks in the text colour, colour glyphs (emoji) composited.
///
/// Not thread-safe, like the renderer it holds: one rasteriser draws one canvas.
final class GlyphRasterizer {
    private let renderer: GlyphRenderer

    init() throws(PreviewError) {
        do {
            renderer = try GlyphRenderer()
        } catch {
            throw PreviewError(error.message)
        }
    }

    /// Draws `line` with its left edge at `x` and its baseline at `baseline` (device pixels), every glyph
    /// position multiplied by `scale`, the glyphs rendered at `size × scale` pixels, inside `clip`.
    func draw(
        _ line: GlyphLine, size: Double, scale: Double, x: Double, baseline: Double, color: RGBColor,
        into canvas: inout Canvas, clip: ClipRect
    ) {
        let pixelSize = Int((size * scale * 64).rounded())
        for run in line.runs {
            guard let face = renderer.face(fontPath: run.fontPath, faceIndex: run.faceIndex, pixelSize64: pixelSize)
            else { continue }
            for glyph in run.glyphs {
                let penX = x + glyph.x * scale
                let penY = baseline + glyph.y * scale
                let wholeX = penX.rounded(.down)
                let subpixel = min(3, Int(((penX - wholeX) * 4).rounded(.down)))
                guard let bitmap = renderer.bitmap(face, glyph: glyph.glyph, subpixel: subpixel),
                    bitmap.width > 0, bitmap.height > 0
                else { continue }
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
}
