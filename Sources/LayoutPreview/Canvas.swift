internal import CFeedLayoutShims

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An opaque sRGB colour.
public struct RGBColor: Sendable, Hashable {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8

    public init(red: UInt8, green: UInt8, blue: UInt8) {
        (self.red, self.green, self.blue) = (red, green, blue)
    }

    /// From `0xRRGGBB`.
    public init(hex: UInt32) {
        self.init(red: UInt8(hex >> 16 & 0xFF), green: UInt8(hex >> 8 & 0xFF), blue: UInt8(hex & 0xFF))
    }
}

/// A device-pixel rectangle to clip drawing to (half-open: `x..<maxX`, `y..<maxY`).
struct ClipRect {
    var x: Int
    var y: Int
    var maxX: Int
    var maxY: Int

    func intersection(_ other: ClipRect) -> ClipRect {
        ClipRect(x: max(x, other.x), y: max(y, other.y), maxX: min(maxX, other.maxX), maxY: min(maxY, other.maxY))
    }

    var isEmpty: Bool { x >= maxX || y >= maxY }
}

/// An 8-bit RGB raster, rows packed, origin at the top left. Every drawing call clips to the canvas.
///
/// Blending is gamma-naive (straight sRGB arithmetic), which is what a quick preview needs; anti-aliased
/// text comes out a touch lighter than a browser's.
public struct Canvas: Sendable {
    public let width: Int
    public let height: Int
    /// `width * height * 3` bytes.
    public private(set) var pixels: [UInt8]

    /// A canvas filled with one colour.
    public init(width: Int, height: Int, background: RGBColor = RGBColor(hex: 0xFFFFFF)) {
        self.width = max(0, width)
        self.height = max(0, height)
        pixels = [UInt8](repeating: 0, count: self.width * self.height * 3)
        fill(x: 0, y: 0, width: self.width, height: self.height, color: background)
    }

    var bounds: ClipRect { ClipRect(x: 0, y: 0, maxX: width, maxY: height) }

    /// The colour at a pixel (for tests and checks).
    public func pixel(x: Int, y: Int) -> RGBColor {
        let index = (y * width + x) * 3
        return RGBColor(red: pixels[index], green: pixels[index + 1], blue: pixels[index + 2])
    }

    /// Paints a rectangle.
    public mutating func fill(x: Int, y: Int, width: Int, height: Int, color: RGBColor) {
        let clip = bounds.intersection(ClipRect(x: x, y: y, maxX: x + width, maxY: y + height))
        guard !clip.isEmpty else { return }
        let canvasWidth = self.width
        pixels.withUnsafeMutableBufferPointer { buffer in
            for row in clip.y..<clip.maxY {
                var index = (row * canvasWidth + clip.x) * 3
                for _ in clip.x..<clip.maxX {
                    buffer[index] = color.red
                    buffer[index + 1] = color.green
                    buffer[index + 2] = color.blue
                    index += 3
                }
            }
        }
    }

    /// Blends `color` at one pixel with coverage 0...255.
    @inline(__always)
    mutating func blend(x: Int, y: Int, color: RGBColor, coverage: Int) {
        guard coverage > 0, x >= 0, y >= 0, x < width, y < height else { return }
        let index = (y * width + x) * 3
        if coverage >= 255 {
            pixels[index] = color.red
            pixels[index + 1] = color.green
            pixels[index + 2] = color.blue
            return
        }
        func mix(_ old: UInt8, _ new: UInt8) -> UInt8 {
            UInt8(truncatingIfNeeded: Int(old) + ((Int(new) - Int(old)) * coverage + 127) / 255)
        }
        pixels[index] = mix(pixels[index], color.red)
        pixels[index + 1] = mix(pixels[index + 1], color.green)
        pixels[index + 2] = mix(pixels[index + 2], color.blue)
    }

    /// Blends an 8-bit coverage mask (`maskWidth` bytes per row) painted in `color`, its top left at
    /// (`x`, `y`), inside `clip`.
    mutating func blendMask(
        _ mask: [UInt8], maskWidth: Int, maskHeight: Int, x: Int, y: Int, color: RGBColor, clip: ClipRect
    ) {
        let area = clip.intersection(bounds).intersection(
            ClipRect(x: x, y: y, maxX: x + maskWidth, maxY: y + maskHeight))
        guard !area.isEmpty else { return }
        let canvasWidth = width
        pixels.withUnsafeMutableBufferPointer { buffer in
            for row in area.y..<area.maxY {
                var source = (row - y) * maskWidth + (area.x - x)
                var index = (row * canvasWidth + area.x) * 3
                for _ in area.x..<area.maxX {
                    let coverage = Int(mask[source])
                    if coverage > 0 {
                        buffer[index] = Self.mix(buffer[index], color.red, coverage)
                        buffer[index + 1] = Self.mix(buffer[index + 1], color.green, coverage)
                        buffer[index + 2] = Self.mix(buffer[index + 2], color.blue, coverage)
                    }
                    source += 1
                    index += 3
                }
            }
        }
    }

    /// Composites premultiplied RGBA (`imageWidth * 4` bytes per row) with its top left at (`x`, `y`),
    /// inside `clip`.
    mutating func composite(
        premultiplied image: [UInt8], imageWidth: Int, imageHeight: Int, x: Int, y: Int, clip: ClipRect
    ) {
        let area = clip.intersection(bounds).intersection(
            ClipRect(x: x, y: y, maxX: x + imageWidth, maxY: y + imageHeight))
        guard !area.isEmpty else { return }
        let canvasWidth = width
        pixels.withUnsafeMutableBufferPointer { buffer in
            image.withUnsafeBufferPointer { image in
                for row in area.y..<area.maxY {
                    var source = ((row - y) * imageWidth + (area.x - x)) * 4
                    var index = (row * canvasWidth + area.x) * 3
                    for _ in area.x..<area.maxX {
                        let alpha = Int(image[source + 3])
                        if alpha == 255 {
                            buffer[index] = image[source]
                            buffer[index + 1] = image[source + 1]
                            buffer[index + 2] = image[source + 2]
                        } else if alpha > 0 || image[source] | image[source + 1] | image[source + 2] != 0 {
                            let keep = 255 - alpha
                            for channel in 0..<3 {
                                let under = (Int(buffer[index + channel]) * keep + 127) / 255
                                buffer[index + channel] = UInt8(min(255, Int(image[source + channel]) + under))
                            }
                        }
                        source += 4
                        index += 3
                    }
                }
            }
        }
    }

    /// A line from (`x0`, `y0`) to (`x1`, `y1`) in device pixels, `thickness` wide, anti-aliased by
    /// distance to the segment.
    mutating func strokeLine(
        from start: (x: Double, y: Double), to end: (x: Double, y: Double), thickness: Double, color: RGBColor,
        clip: ClipRect
    ) {
        let radius = thickness / 2
        let area = clip.intersection(bounds).intersection(
            ClipRect(
                x: Int((min(start.x, end.x) - radius - 1).rounded(.down)),
                y: Int((min(start.y, end.y) - radius - 1).rounded(.down)),
                maxX: Int((max(start.x, end.x) + radius + 1).rounded(.up)),
                maxY: Int((max(start.y, end.y) + radius + 1).rounded(.up))))
        guard !area.isEmpty else { return }
        let dx = end.x - start.x
        let dy = end.y - start.y
        let lengthSquared = max(dx * dx + dy * dy, 1e-9)
        for row in area.y..<area.maxY {
            for column in area.x..<area.maxX {
                let px = Double(column) + 0.5
                let py = Double(row) + 0.5
                let t = min(1, max(0, ((px - start.x) * dx + (py - start.y) * dy) / lengthSquared))
                let offsetX = px - start.x - t * dx
                let offsetY = py - start.y - t * dy
                let distance = (offsetX * offsetX + offsetY * offsetY).squareRoot()
                let coverage = min(1, max(0, radius + 0.5 - distance))
                blend(x: column, y: row, color: color, coverage: Int(coverage * 255))
            }
        }
    }

    @inline(__always)
    private static func mix(_ old: UInt8, _ new: UInt8, _ coverage: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: Int(old) + ((Int(new) - Int(old)) * coverage + 127) / 255)
    }

    /// Writes the canvas as an RGB PNG with libpng. The file appears whole or not at all: the PNG is
    /// written to a temporary file beside it, then renamed over it.
    ///
    /// - Parameter path: The file to write.
    /// - Throws: ``PreviewError`` naming the file.
    public func writePNG(to path: String) throws(PreviewError) {
        guard width > 0, height > 0 else {
            throw PreviewError("\(path): nothing to write, the canvas is \(width)×\(height)")
        }
        let temporary = path + ".tmp-\(getpid())"
        var message = [CChar](repeating: 0, count: 256)
        let status = pixels.withUnsafeBufferPointer { buffer in
            fl_png_write_rgb(
                temporary, buffer.baseAddress, UInt32(width), UInt32(height), width * 3, &message, message.count)
        }
        guard status == Int32(FL_PNG_WRITE_OK.rawValue) else {
            unlink(temporary)
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw PreviewError("\(path): cannot write the PNG (\(reason)); check that the folder is writable")
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw PreviewError("\(path): cannot move the finished PNG into place (\(reason))")
        }
    }
}

/// Why a preview could not be rendered or written.
public struct PreviewError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What failed, naming the file, and what to do.
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
