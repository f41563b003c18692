internal import CHarfBuzz

/// One glyph of a shaped line.
public struct PositionedGlyph: Sendable, Equatable {
    /// The glyph index in its run's face.
    public var glyph: UInt32
    /// Pixels from the line's left edge to the glyph origin.
    public var x: Double
    /// Pixels from the baseline to the glyph origin, growing downwards.
    public var y: Double

    /// Creates a glyph.
    public init(glyph: UInt32, x: Double, y: Double) {
        (self.glyph, self.x, self.y) = (glyph, x, y)
    }
}

/// Glyphs of one line that share a font face.
public struct GlyphRun: Sendable, Equatable {
    /// The font file the glyph indices refer to.
    public var fontPath: String
    /// The face inside the file.
    public var faceIndex: Int
    /// The glyphs, left to right as they are shown.
    public var glyphs: [PositionedGlyph]
}

/// A line of a measured text, shaped for drawing.
public struct GlyphLine: Sendable, Equatable {
    /// The line's text, as ``TextMeasurement/lineTexts`` gives it.
    public var text: String
    /// Pixels from the top of the text block to the top of this line box.
    public var top: Double
    /// Pixels from the top of the text block to this line's baseline.
    public var baseline: Double
    /// The line box height in pixels.
    public var height: Double
    /// The advance of the whole line in pixels.
    public var width: Double
    /// Font runs, left to right as they are shown.
    public var runs: [GlyphRun]
}

extension TextMeasurer {
    /// Shapes the lines of a measurement for drawing: glyphs, the faces they come from (the primary font or
    /// the fallback fonts measurement picked) and where each line box and baseline sits.
    ///
    /// The line breaks are the measurement's own (its ``TextMeasurement/lineTexts``); nothing is
    /// re-wrapped. Lines are stacked as Blink stacks them: `line-height: normal` lines as tall as the
    /// half-leading boxes of the fonts they use, fixed line heights with the leading split around the
    /// primary font, the extra pixel below. Right-to-left scripts are ordered for a left-to-right
    /// paragraph by a reduced bidi algorithm (strong letters, European digits, neutrals between runs of
    /// the same direction), enough for captions that mix Arabic or Hebrew with Latin text.
    ///
    /// - Parameter measurement: What ``measure(_:width:maxLines:)`` returned with this measurer.
    /// - Returns: One line per line text.
    public func glyphLines(_ measurement: TextMeasurement) -> [GlyphLine] {
        var lines: [GlyphLine] = []
        var top = 0.0
        for text in measurement.lineTexts {
            let line = glyphLine(text, top: top)
            top += line.height
            lines.append(line)
        }
        return lines
    }

    private func glyphLine(_ text: String, top: Double) -> GlyphLine {
        let units = Array(text.utf16)
        let (runs, faces) = units.withUnsafeBufferPointer { Self.shapeForDrawing($0, fonts: fonts) }
        let primary = fonts.primary.metrics
        let height: Double
        let baseline: Double
        if let fixedLineHeight {
            // Blink's CalculateLeadingSpace: the leading above is floored to a pixel.
            let leading = fixedLineHeight - Double(primary.ascent + primary.descent)
            baseline = (leading / 2).rounded(.down) + Double(primary.ascent)
            height = fixedLineHeight
        } else {
            var above = primary.halfLeadingBox.above
            var below = primary.halfLeadingBox.below
            for face in faces where face !== fonts.primary {
                above = max(above, face.metrics.halfLeadingBox.above)
                below = max(below, face.metrics.halfLeadingBox.below)
            }
            baseline = Double(above)
            height = Double(above + below)
        }
        let width = runs.last.map { run in run.width } ?? 0
        return GlyphLine(
            text: text, top: top, baseline: top + baseline, height: height, width: width, runs: runs.map(\.run))
    }

    /// The direction classes the reduced bidi algorithm tells apart.
    private enum BidiClass { case leftToRight, rightToLeft, europeanNumber, neutral }

    private static func bidiClass(of scalar: Unicode.Scalar) -> BidiClass {
        switch scalar.value {
        case 0x0590...0x08FF, 0xFB1D...0xFDFF, 0xFE70...0xFEFF, 0x10800...0x10FFF, 0x1E800...0x1EFFF:
            return .rightToLeft
        default:
            break
        }
        let properties = scalar.properties
        if properties.numericType == .decimal { return .europeanNumber }
        switch properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .spacingMark:
            return .leftToRight
        default:
            return .neutral
        }
    }

    /// Splits a line into runs of one face and one direction, shapes each, and lays them out left to right.
    ///
    /// The clusters, their faces and the glyphs' advances come from measurement's own code
    /// (``GraphemeClusters``, `Shaper.face(ofCluster:_:_:fonts:)`, `Shaper.advance(of:shaped:face:)`): a line is
    /// drawn with the runs it was measured with, split further only where the direction changes.
    private static func shapeForDrawing(_ units: UnsafeBufferPointer<UInt16>, fonts: FontSet)
        -> (runs: [(run: GlyphRun, width: Double)], faces: [LoadedFont])
    {
        // Clusters with their face and bidi class.
        var clusters: [(range: Range<Int>, face: LoadedFont, bidi: BidiClass)] = []
        var start = 0
        for end in GraphemeClusters.ends(units, 0..<units.count) {
            let first = String(decoding: UnsafeBufferPointer(rebasing: units[start..<end]), as: UTF16.self)
                .unicodeScalars.first
            let bidi = first.map(bidiClass(of:)) ?? .neutral
            clusters.append((start..<end, Shaper.face(ofCluster: units, start, end, fonts: fonts), bidi))
            start = end
        }
        // Embedding levels for a left-to-right paragraph: R is 1, numbers after R are 2 (shown left to
        // right inside the right-to-left stretch), neutrals take R only between two R-ish neighbours (N1).
        var levels = [Int](repeating: 0, count: clusters.count)
        var previousStrong = BidiClass.leftToRight
        for (index, cluster) in clusters.enumerated() {
            switch cluster.bidi {
            case .rightToLeft:
                levels[index] = 1
                previousStrong = .rightToLeft
            case .leftToRight:
                previousStrong = .leftToRight
            case .europeanNumber:
                levels[index] = previousStrong == .rightToLeft ? 2 : 0
            case .neutral:
                break
            }
        }
        var nextStrongIsRightToLeft = false
        for index in clusters.indices.reversed() {
            switch clusters[index].bidi {
            case .rightToLeft: nextStrongIsRightToLeft = true
            case .leftToRight: nextStrongIsRightToLeft = false
            case .europeanNumber: if levels[index] == 0 { nextStrongIsRightToLeft = false }
            case .neutral:
                var before = index - 1
                while before >= 0, clusters[before].bidi == .neutral { before -= 1 }
                let previousIsRightToLeft = before >= 0 && levels[before] >= 1
                if previousIsRightToLeft && nextStrongIsRightToLeft { levels[index] = 1 }
            }
        }
        // Runs of one face and one level, in logical order.
        var logical: [(range: Range<Int>, face: LoadedFont, level: Int)] = []
        for (index, cluster) in clusters.enumerated() {
            if let last = logical.last, last.face === cluster.face, last.level == levels[index] {
                logical[logical.count - 1].range = last.range.lowerBound..<cluster.range.upperBound
            } else {
                logical.append((cluster.range, cluster.face, levels[index]))
            }
        }
        // Rule L2: from the highest level down, reverse every stretch at that level or above.
        var visual = logical
        if let highest = visual.map(\.level).max(), highest > 0 {
            for level in stride(from: highest, through: 1, by: -1) {
                var start = 0
                while start < visual.count {
                    guard visual[start].level >= level else {
                        start += 1
                        continue
                    }
                    var end = start
                    while end < visual.count, visual[end].level >= level { end += 1 }
                    visual[start..<end].reverse()
                    start = end
                }
            }
        }

        var result: [(run: GlyphRun, width: Double)] = []
        var faces: [LoadedFont] = []
        guard let base = units.baseAddress, let buffer = hb_buffer_create() else { return (result, faces) }
        defer { hb_buffer_destroy(buffer) }
        var pen: Int64 = 0
        for run in visual {
            hb_buffer_clear_contents(buffer)
            hb_buffer_add_utf16(
                buffer, base, Int32(units.count), UInt32(run.range.lowerBound), Int32(run.range.count))
            hb_buffer_set_direction(buffer, run.level % 2 == 1 ? HB_DIRECTION_RTL : HB_DIRECTION_LTR)
            hb_buffer_guess_segment_properties(buffer)
            // The same features measurement shapes with, so advances match.
            var features = [Shaper.contextualHalfWidthSpacing]
            if let hanKerning = run.face.hanKerning {
                features += HanKerning.features(for: units, runRange: run.range, data: hanKerning)
            }
            hb_shape(run.face.harfBuzzFont, buffer, features, UInt32(features.count))
            var glyphCount: UInt32 = 0
            guard let positions = hb_buffer_get_glyph_positions(buffer, &glyphCount),
                let infos = hb_buffer_get_glyph_infos(buffer, &glyphCount)
            else { continue }
            var glyphs: [PositionedGlyph] = []
            glyphs.reserveCapacity(Int(glyphCount))
            for index in 0..<Int(glyphCount) {
                let glyph = infos[index].codepoint
                let advance = Shaper.advance(of: glyph, shaped: positions[index].x_advance, face: run.face)
                glyphs.append(
                    PositionedGlyph(
                        glyph: glyph, x: Double(pen + Int64(positions[index].x_offset)) / 65536,
                        y: -Double(positions[index].y_offset) / 65536))
                pen += advance
            }
            if !faces.contains(where: { $0 === run.face }) { faces.append(run.face) }
            result.append(
                (GlyphRun(fontPath: run.face.path, faceIndex: run.face.faceIndex, glyphs: glyphs), Double(pen) / 65536))
        }
        return (result, faces)
    }
}
