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
    /// JPEGs decode with libjpeg's DCT scaling at the smallest scale (1/8, 1/4, 1/2) that still leaves at
    /// least the target size, so a 4000-pixel photo shown 236 pixels wide costs a fraction of a full
    /// decode; PNGs decode whole through libpng's png_image. The decoded image is turned upright as its
    /// EXIF orientation says, then area-averaged down (or bilinearly up) to the target size.
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
        let targetWidth = max(1, width)
        let targetHeight = max(1, height)
        let info: ImageInfo
        switch ImageHeaderParser.parse(bytes, isComplete: true) {
        case .info(let parsed): info = parsed
        case .failure(let error): throw PreviewError("\(source): \(error.reason)")
        case .needMoreBytes: throw PreviewError("\(source): the image ends inside its header")
        }
        // Formats other than JPEG and PNG, and images over the budget, are refused by the decoder.
        // The stored image is turned a quarter for orientations 5-8: compare it with the target turned too.
        let swaps = info.swapsDimensionsForDisplay
        let storedTargetWidth = swaps ? targetHeight : targetWidth
        let storedTargetHeight = swaps ? targetWidth : targetHeight
        var denominator = 1
        if info.format == .jpeg {
            for candidate in [8, 4, 2]
            where ceilDivide(info.width, candidate) >= storedTargetWidth
                && ceilDivide(info.height, candidate) >= storedTargetHeight
            {
                denominator = candidate
                break
            }
        }
        let decoded: DecodedImage
        do {
            decoded = try ImagePixelDecoder.decodePixels(
                bytes, source: source,
                options: PixelDecodeOptions(pixelBudget: pixelBudget, jpegScaleDenominator: denominator))
        } catch {
            throw PreviewError(error.message)
        }
        let upright = decoded.upright()
        let premultipliedPixels = premultiplied(upright.pixels)
        let pixels = resample(
            premultipliedPixels, width: upright.width, height: upright.height, toWidth: targetWidth,
            height: targetHeight)
        return PhotoThumbnail(width: targetWidth, height: targetHeight, pixels: pixels, scaleDenominator: denominator)
    }

    private static func ceilDivide(_ value: Int, _ divisor: Int) -> Int { (value + divisor - 1) / divisor }

    /// The pixels premultiplied by alpha, as floats for resampling.
    private static func premultiplied(_ pixels: [UInt8]) -> [Float] {
        var output = [Float](repeating: 0, count: pixels.count)
        pixels.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { output in
                for index in stride(from: 0, to: source.count, by: 4) {
                    let alpha = Float(source[index + 3])
                    let factor = alpha / 255
                    output[index] = Float(source[index]) * factor
                    output[index + 1] = Float(source[index + 1]) * factor
                    output[index + 2] = Float(source[index + 2]) * factor
                    output[index + 3] = alpha
                }
            }
        }
        return output
    }

    /// For each output index along one axis: the first source index and the weights from there.
    private static func weights(from source: Int, to target: Int) -> [(first: Int, weights: [Float])] {
        let ratio = Double(source) / Double(target)
        return (0..<target).map { index in
            if ratio >= 1 {
                // Shrinking: each output pixel averages the source area it covers, partial pixels
                // weighted by how much of them it covers.
                let start = Double(index) * ratio
                let end = min(Double(source), start + ratio)
                let first = Int(start.rounded(.down))
                let last = min(source - 1, Int((end - 1e-9).rounded(.down)))
                var weights: [Float] = []
                for sourceIndex in first...max(first, last) {
                    let overlap = min(end, Double(sourceIndex + 1)) - max(start, Double(sourceIndex))
                    weights.append(Float(max(0, overlap) / ratio))
                }
                return (first, weights)
            }
            // Growing: bilinear between the two nearest source centres.
            let centre = (Double(index) + 0.5) * ratio - 0.5
            let lower = Int(centre.rounded(.down))
            let fraction = Float(centre - Double(lower))
            let first = min(max(lower, 0), source - 1)
            let second = min(max(lower + 1, 0), source - 1)
            if first == second { return (first, [1]) }
            return (first, [1 - fraction, fraction])
        }
    }

    /// Separable resampling of premultiplied RGBA floats to 8-bit premultiplied RGBA.
    private static func resample(_ pixels: [Float], width: Int, height: Int, toWidth: Int, height toHeight: Int)
        -> [UInt8]
    {
        let columns = weights(from: width, to: toWidth)
        let rows = weights(from: height, to: toHeight)
        var horizontal = [Float](repeating: 0, count: toWidth * height * 4)
        pixels.withUnsafeBufferPointer { source in
            horizontal.withUnsafeMutableBufferPointer { target in
                for y in 0..<height {
                    let sourceRow = y * width * 4
                    let targetRow = y * toWidth * 4
                    for (x, column) in columns.enumerated() {
                        var sums: (Float, Float, Float, Float) = (0, 0, 0, 0)
                        for (offset, weight) in column.weights.enumerated() {
                            let index = sourceRow + (column.first + offset) * 4
                            sums.0 += source[index] * weight
                            sums.1 += source[index + 1] * weight
                            sums.2 += source[index + 2] * weight
                            sums.3 += source[index + 3] * weight
                        }
                        let index = targetRow + x * 4
                        (target[index], target[index + 1], target[index + 2], target[index + 3]) = sums
                    }
                }
            }
        }
        var output = [UInt8](repeating: 0, count: toWidth * toHeight * 4)
        horizontal.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                for (y, row) in rows.enumerated() {
                    for x in 0..<toWidth {
                        var sums: (Float, Float, Float, Float) = (0, 0, 0, 0)
                        for (offset, weight) in row.weights.enumerated() {
                            let index = ((row.first + offset) * toWidth + x) * 4
                            sums.0 += source[index] * weight
                            sums.1 += source[index + 1] * weight
                            sums.2 += source[index + 2] * weight
                            sums.3 += source[index + 3] * weight
                        }
                        // Weights are non-negative, so adding a half and truncating rounds; premultiplied
                        // colour never exceeds its alpha.
                        let alpha = min(255, sums.3 + 0.5)
                        let index = (y * toWidth + x) * 4
                        target[index] = UInt8(min(alpha, sums.0 + 0.5))
                        target[index + 1] = UInt8(min(alpha, sums.1 + 0.5))
                        target[index + 2] = UInt8(min(alpha, sums.2 + 0.5))
                        target[index + 3] = UInt8(alpha)
                    }
                }
            }
        }
        return output
    }
}
