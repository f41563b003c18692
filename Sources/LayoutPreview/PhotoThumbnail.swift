import Foundation
import ImageProbe

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
    ///   - width: Target width in pixels, at least 1.
    ///   - height: Target height in pixels, at least 1.
    ///   - pixelBudget: Images with more stored pixels are refused unread.
    /// - Throws: ``PreviewError`` naming the file: unreadable, not JPEG or PNG, over the budget,
    ///   or damaged (libjpeg's warnings count as damage, as in `probe --verify`).
    public static func load(
        path: String, width: Int, height: Int, pixelBudget: Int = ImageInfo.defaultPixelBudget
    ) throws(PreviewError) -> PhotoThumbnail {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path), options: .mappedIfSafe)
        } catch {
            throw PreviewError("\(path): cannot read the image (\(error.localizedDescription))")
        }
        let result = data.withUnsafeBytes { bytes in
            Result { () throws(PreviewError) in
                try decode(bytes, source: path, width: width, height: height, pixelBudget: pixelBudget)
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
