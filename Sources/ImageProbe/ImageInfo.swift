/// The container formats whose headers ``ImageHeaderParser`` understands.
public enum ImageFormat: String, Sendable, CaseIterable {
    case jpeg, png, gif, webp, bmp
}

/// What an image's header says about it: its size as stored, its EXIF orientation, and flags.
///
/// `width` and `height` are the stored pixel dimensions exactly as the header declares them.
/// A layout wants the size the image is *shown* at, which is ``displayWidth`` ×
/// ``displayHeight``: EXIF orientations 5 to 8 rotate by a quarter turn, so they swap the two.
public struct ImageInfo: Sendable, Equatable {
    /// The pixel budget the issue asks for by default: 100 megapixels.
    public static let defaultPixelBudget = 100_000_000

    /// The container format, recognised by its signature (never by a file name).
    public var format: ImageFormat
    /// Stored width in pixels, from the header.
    public var width: Int
    /// Stored height in pixels, from the header.
    public var height: Int
    /// EXIF orientation, 1...8; 1 when the image carries none (or an invalid one, with a warning).
    public var orientation: Int
    /// How many bytes from the start of the input were needed to learn all of this.
    ///
    /// ``ImageHeaderParser`` reports the end of the last byte it examined;
    /// ``LocalImageProber`` reports how many bytes it actually read from the file.
    public var bytesRead: Int
    /// A progressive JPEG (SOF2, SOF6, SOF10 or SOF14).
    public var isProgressive: Bool
    /// An interlaced (Adam7) PNG.
    public var isInterlaced: Bool
    /// More than one frame: APNG, an animated GIF or an animated WebP.
    public var isAnimated: Bool
    /// A four-component JPEG (CMYK, or YCCK when an Adobe APP14 segment says transform 2).
    public var isCMYK: Bool
    /// Bits per sample (JPEG precision, PNG bit depth) or per pixel (BMP); `nil` when the
    /// format's header has no single meaningful value.
    public var bitDepth: Int?
    /// An Apple "CgBI" PNG (premultiplied BGRA, raw deflate) that standard decoders refuse.
    public var isAppleOptimizedPNG: Bool
    /// Things that were wrong but did not stop the probe, each naming a byte offset.
    public var warnings: [String]

    /// Creates a header description; every flag defaults to "not set".
    public init(
        format: ImageFormat,
        width: Int,
        height: Int,
        orientation: Int = 1,
        bytesRead: Int = 0,
        isProgressive: Bool = false,
        isInterlaced: Bool = false,
        isAnimated: Bool = false,
        isCMYK: Bool = false,
        bitDepth: Int? = nil,
        isAppleOptimizedPNG: Bool = false,
        warnings: [String] = []
    ) {
        self.format = format
        self.width = width
        self.height = height
        self.orientation = orientation
        self.bytesRead = bytesRead
        self.isProgressive = isProgressive
        self.isInterlaced = isInterlaced
        self.isAnimated = isAnimated
        self.isCMYK = isCMYK
        self.bitDepth = bitDepth
        self.isAppleOptimizedPNG = isAppleOptimizedPNG
        self.warnings = warnings
    }

    /// Whether showing the image turns it a quarter turn (EXIF orientations 5 to 8).
    public var swapsDimensionsForDisplay: Bool { orientation >= 5 && orientation <= 8 }

    /// The width the image is shown at, after applying ``orientation``.
    public var displayWidth: Int { swapsDimensionsForDisplay ? height : width }

    /// The height the image is shown at, after applying ``orientation``.
    public var displayHeight: Int { swapsDimensionsForDisplay ? width : height }

    /// Stored pixel count; 64-bit, so even 2³¹ × 2³¹ PNG headers cannot overflow it.
    public var pixelCount: Int { width * height }

    /// Whether decoding this image would exceed a pixel budget.
    ///
    /// Header-only probing reports any size; a caller that means to decode checks this first,
    /// because a small file can declare a gigantic canvas (a decompression bomb).
    /// - Parameter pixelBudget: The largest pixel count the caller is willing to decode.
    /// - Returns: `true` when ``pixelCount`` is above `pixelBudget`.
    public func exceedsPixelBudget(_ pixelBudget: Int = ImageInfo.defaultPixelBudget) -> Bool {
        pixelCount > pixelBudget
    }

    /// Refuses to decode an image above `pixelBudget`, before any pixel is read: the one check every decoding path
    /// (local files, URLs, bytes in memory) makes.
    /// - Throws: ``ImageProbeError`` `.exceedsPixelBudget` naming `source`, the size and the budget.
    func checkPixelBudget(_ pixelBudget: Int, source: String) throws(ImageProbeError) {
        guard exceedsPixelBudget(pixelBudget) else { return }
        throw ImageProbeError(
            code: .exceedsPixelBudget,
            message: "\(width)×\(height) is above the pixel budget of \(pixelBudget); raise the budget to decode it",
            source: source)
    }
}
