import ImageProbe
import LocalFileAccess

/// A photo decoded and scaled to the size it is shown at: premultiplied RGBA, rows packed, EXIF orientation
/// applied.
public struct PhotoThumbnail: Sendable {
    public var width: Int
    public var height: Int
    /// `width * height * 4` bytes, colour premultiplied by alpha.
    public var pixels: [UInt8]
    /// The JPEG DCT scale denominator the decode used (1 for PNG).
    public var scaleDenominator: Int

    /// Reads a JPEG or PNG file and scales it to `width` × `height` display pixels.
    ///
    /// The decode never holds the full image: see ``ImagePixelDecoder/resampled(_:source:width:height:options:)``
    /// (JPEG DCT scaling towards the target, rows area-averaged into it as they are decoded, EXIF orientation
    /// applied).
    ///
    /// - Parameters:
    ///   - path: The image file.
    ///   - source: How errors name it (a feed's reference); the path when nil. Errors never quote the file.
    ///   - gate: Which files may be read (a preview passes the layout's gate for the feed's images).
    ///   - width: Target width in pixels, at least 1.
    ///   - height: Target height in pixels, at least 1.
    ///   - pixelBudget: Images with more stored pixels are refused unread.
    /// - Throws: ``PreviewError`` naming the file: unreadable or refused by the gate, not JPEG or PNG, over the
    ///   budget, or damaged (libjpeg's warnings count as damage, as in `probe --verify`).
    public static func load(
        path: String, source: String? = nil, gate: LocalFileGate = .anyRegularFile, width: Int, height: Int,
        pixelBudget: Int = ImageInfo.defaultPixelBudget
    ) throws(PreviewError) -> PhotoThumbnail {
        let name = source ?? path
        let bytes: [UInt8]
        do {
            bytes = try gate.read(path)
        } catch {
            throw PreviewError("\(name): \(error.reason)")
        }
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(PreviewError) in
                try decode(raw, source: name, width: width, height: height, pixelBudget: pixelBudget)
            }
        }
        return try result.get()
    }

    /// Decodes an image held in memory; see ``load(path:width:height:pixelBudget:)``.
    public static func decode(
        _ bytes: UnsafeRawBufferPointer, source: String, width: Int, height: Int,
        pixelBudget: Int = ImageInfo.defaultPixelBudget
    ) throws(PreviewError) -> PhotoThumbnail {
        do {
            let image = try ImagePixelDecoder.resampled(
                bytes, source: source, width: width, height: height, options: PixelDecodeOptions(pixelBudget: pixelBudget))
            return PhotoThumbnail(
                width: image.width, height: image.height, pixels: image.pixels, scaleDenominator: image.scaleDenominator)
        } catch {
            throw PreviewError(error.message)
        }
    }
}
