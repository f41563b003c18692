import CFeedLayoutShims

/// Limits for decoding pixels, which unlike header parsing costs time and memory in proportion
/// to the image.
public struct PixelDecodeOptions: Sendable, Equatable {
    /// The largest width × height that will be decoded (a decompression-bomb guard).
    public var pixelBudget: Int
    /// The most scans a progressive JPEG may have; 0 means no limit.
    public var maximumProgressiveScans: Int
    /// JPEG DCT scaling: decode at 1/1, 1/2, 1/4 or 1/8 of the size. PNG always decodes fully.
    ///
    /// At 1/8 libjpeg still entropy-decodes every scan, so corrupt data is still found, but it
    /// skips most of the inverse DCT and colour conversion.
    public var jpegScaleDenominator: Int

    /// Creates options; the defaults verify at full size within 100 megapixels and 100 scans.
    public init(
        pixelBudget: Int = ImageInfo.defaultPixelBudget, maximumProgressiveScans: Int = 100,
        jpegScaleDenominator: Int = 1
    ) {
        self.pixelBudget = pixelBudget
        self.maximumProgressiveScans = maximumProgressiveScans
        self.jpegScaleDenominator = jpegScaleDenominator
    }

    /// Options for a placeholder: a 1/8 decode is plenty for one colour.
    public static let placeholder = PixelDecodeOptions(jpegScaleDenominator: 8)
}

/// Decoded pixels: RGBA, 8 bits per channel, not premultiplied, rows packed, as stored in the file (before EXIF
/// orientation).
public struct DecodedImage: Sendable {
    /// The header facts (declared size, format, EXIF orientation).
    public var info: ImageInfo
    /// The decoded size: the declared size, or less after JPEG DCT scaling.
    public var width: Int
    public var height: Int
    /// `width * height * 4` bytes.
    public var pixels: [UInt8]
}

extension DecodedImage {
    /// The pixels as displayed: EXIF orientation applied, width and height swapped for orientations 5–8 (the
    /// mapping placeholders use too).
    public func upright() -> DecodedImage {
        let turned = RGBAImage(width: width, height: height, pixels: pixels).applying(orientation: info.orientation)
        return DecodedImage(info: info, width: turned.width, height: turned.height, pixels: turned.pixels)
    }
}

/// An sRGB colour with alpha, 0...255 per channel.
public struct PlaceholderColor: Sendable, Equatable, CustomStringConvertible {
    /// Red, 0...255 (sRGB).
    public var red: UInt8
    /// Green, 0...255 (sRGB).
    public var green: UInt8
    /// Blue, 0...255 (sRGB).
    public var blue: UInt8
    /// Opacity, 0 (transparent) ... 255 (opaque).
    public var alpha: UInt8

    /// Creates a colour.
    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        (self.red, self.green, self.blue, self.alpha) = (red, green, blue, alpha)
    }

    /// `#RRGGBB`, or `#RRGGBBAA` when not opaque: what a client paints the empty slot with.
    public var hexString: String {
        let channels = alpha == 255 ? [red, green, blue] : [red, green, blue, alpha]
        let digits = Array("0123456789abcdef")
        return "#" + String(channels.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] })
    }

    /// The ``hexString``.
    public var description: String { hexString }
}

/// What a client paints in an image's slot before the image arrives.
public struct ImagePlaceholder: Sendable, Equatable {
    /// The alpha-weighted mean colour.
    public var averageColor: PlaceholderColor
    /// A ThumbHash (https://evanw.github.io/thumbhash/) of the image as displayed.
    public var thumbHash: [UInt8]

    /// Creates a placeholder (for instance from a cache).
    public init(averageColor: PlaceholderColor, thumbHash: [UInt8]) {
        self.averageColor = averageColor
        self.thumbHash = thumbHash
    }

    /// ``thumbHash`` in standard base64, the form clients decode.
    public var thumbHashBase64: String { ThumbHash.base64(thumbHash) }
}

/// What a successful decode found.
public struct PixelDecodeReport: Sendable, Equatable {
    /// The decoded format (JPEG or PNG).
    public var format: ImageFormat
    /// Width declared by the image.
    public var width: Int
    /// Height declared by the image.
    public var height: Int
    /// Width actually decoded (smaller with JPEG scaling).
    public var decodedWidth: Int
    /// Height actually decoded (smaller with JPEG scaling).
    public var decodedHeight: Int
    /// Scans read (JPEG; 1 for baseline, more for progressive); 0 for PNG.
    public var scanCount: Int
    /// The alpha-weighted mean colour of the decoded pixels: the placeholder to paint.
    public var averageColor: PlaceholderColor
}

/// Decodes pixels with libjpeg-turbo and libpng, through the C shim.
///
/// Decoding is CPU-bound and blocking: call it from a thread that may block (not the
/// cooperative pool in a tight loop), and check ``ImageInfo/exceedsPixelBudget(_:)`` first when
/// the header is already known.
public enum ImagePixelDecoder {
    /// Decodes a whole JPEG or PNG and reports whether it is decodable.
    ///
    /// Library warnings (corrupt data that libjpeg would paper over) count as failures, since
    /// the point is to know the file is sound.
    ///
    /// - Parameters:
    ///   - bytes: The complete file.
    ///   - source: The input's name for error messages (empty for a buffer).
    ///   - options: Pixel budget, scan cap, JPEG scaling.
    /// - Returns: Declared and decoded sizes, scan count and the average colour.
    /// - Throws: ``ImageProbeError`` — the header parser's errors, `.exceedsPixelBudget`,
    ///   `.notDecodable` (with the library's message), or `.unknownFormat` for formats other
    ///   than JPEG and PNG.
    public static func verifyDecodable(
        _ bytes: UnsafeRawBufferPointer, source: String = "", options: PixelDecodeOptions = PixelDecodeOptions()
    ) throws(ImageProbeError) -> PixelDecodeReport {
        try decode(bytes, source: source, options: options, keepingPixels: false).report
    }

    /// Builds the placeholder a client paints before the photo arrives: the average colour and
    /// a ThumbHash of the image as displayed (EXIF orientation applied).
    ///
    /// JPEGs are decoded with DCT scaling, at the smallest scale that still leaves 100 pixels
    /// on the long side, so the cost is a fraction of a full decode.
    ///
    /// - Parameters:
    ///   - bytes: The complete file.
    ///   - source: The input's name for error messages.
    ///   - options: Pixel budget and scan cap; the JPEG scale is chosen here.
    /// - Returns: The placeholder.
    /// - Throws: As ``verifyDecodable(_:source:options:)``.
    public static func placeholder(
        _ bytes: UnsafeRawBufferPointer, source: String = "", options: PixelDecodeOptions = PixelDecodeOptions()
    ) throws(ImageProbeError) -> ImagePlaceholder {
        var options = options
        options.jpegScaleDenominator = 8
        if case .info(let info) = ImageHeaderParser.parse(bytes, isComplete: true) {
            let longest = max(info.width, info.height)
            while options.jpegScaleDenominator > 1 && longest / options.jpegScaleDenominator < 100 {
                options.jpegScaleDenominator /= 2
            }
        }
        let decoded = try decode(bytes, source: source, options: options, keepingPixels: true)
        guard let pixels = decoded.pixels, pixels.width > 0, pixels.height > 0 else {
            throw ImageProbeError(code: .notDecodable, message: "the image decoded to no pixels", source: source)
        }
        let small = pixels.fitting(within: 100).applying(orientation: decoded.info.orientation)
        let hash = ThumbHash.encode(small)
        return ImagePlaceholder(averageColor: decoded.report.averageColor, thumbHash: hash)
    }

    /// Decodes a whole JPEG or PNG to RGBA pixels for drawing: the one place, besides verification and
    /// placeholders, where pixels are decoded, so every caller gets the same limits and the same messages.
    ///
    /// - Parameters:
    ///   - bytes: The complete file.
    ///   - source: The input's name for error messages.
    ///   - options: Pixel budget, scan cap, and the JPEG DCT scale (1, 2, 4 or 8; PNG always decodes whole).
    /// - Returns: The header facts and the pixels as stored (EXIF orientation not applied).
    /// - Throws: As ``verifyDecodable(_:source:options:)``, and `.notDecodable` for an image with no pixels.
    public static func decodePixels(
        _ bytes: UnsafeRawBufferPointer, source: String = "", options: PixelDecodeOptions = PixelDecodeOptions()
    ) throws(ImageProbeError) -> DecodedImage {
        let decoded = try decode(bytes, source: source, options: options, keepingPixels: true)
        guard let pixels = decoded.pixels, pixels.width > 0, pixels.height > 0 else {
            throw ImageProbeError(code: .notDecodable, message: "the image decoded to no pixels", source: source)
        }
        return DecodedImage(info: decoded.info, width: pixels.width, height: pixels.height, pixels: pixels.pixels)
    }

    /// Parses the header, enforces the limits, and runs the C decoder.
    private static func decode(
        _ bytes: UnsafeRawBufferPointer, source: String, options: PixelDecodeOptions, keepingPixels: Bool
    ) throws(ImageProbeError) -> (report: PixelDecodeReport, pixels: RGBAImage?, info: ImageInfo) {
        let info: ImageInfo
        switch ImageHeaderParser.parse(bytes, isComplete: true) {
        case .info(let parsed): info = parsed
        case .failure(let error): throw error.attributed(to: source)
        case .needMoreBytes:
            throw ImageProbeError(code: .truncated, message: "the image ends inside its header", source: source)
        }
        guard info.format == .jpeg || info.format == .png else {
            throw ImageProbeError(
                code: .unknownFormat,
                message:
                    "pixel decoding supports JPEG and PNG only, this is \(info.format.rawValue); its header size is still valid",
                source: source)
        }
        try info.checkPixelBudget(options.pixelBudget, source: source)
        var shimOptions = fl_image_decode_options(
            pixel_budget: UInt64(max(0, options.pixelBudget)),
            max_progressive_scans: Int32(clamping: options.maximumProgressiveScans),
            scale_denominator: Int32(clamping: options.jpegScaleDenominator),
            keep_pixels: keepingPixels ? 1 : 0, reserved: 0)
        var result = fl_image_decode_result()
        let base = bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!
        switch info.format {
        case .jpeg: fl_jpeg_decode(base, bytes.count, &shimOptions, &result)
        default: fl_png_decode(base, bytes.count, &shimOptions, &result)
        }
        defer { fl_image_free_pixels(result.pixels) }
        guard result.status == Int32(FL_IMAGE_OK.rawValue) else {
            throw error(for: result, format: info.format, source: source)
        }
        func mean(_ sum: UInt64) -> UInt8 {
            result.sum_alpha == 0 ? 0 : UInt8(clamping: (sum + result.sum_alpha / 2) / result.sum_alpha)
        }
        let alpha = result.pixel_count == 0 ? 0 : (result.sum_alpha + result.pixel_count / 2) / result.pixel_count
        let report = PixelDecodeReport(
            format: info.format, width: Int(result.width), height: Int(result.height),
            decodedWidth: Int(result.decoded_width), decodedHeight: Int(result.decoded_height),
            scanCount: Int(result.scan_count),
            averageColor: PlaceholderColor(
                red: mean(result.sum_red), green: mean(result.sum_green), blue: mean(result.sum_blue),
                alpha: UInt8(clamping: alpha)))
        var pixels: RGBAImage?
        if let decoded = result.pixels {
            let count = Int(result.decoded_width) * Int(result.decoded_height) * 4
            pixels = RGBAImage(
                width: Int(result.decoded_width), height: Int(result.decoded_height),
                pixels: Array(UnsafeBufferPointer(start: decoded, count: count)))
        }
        return (report, pixels, info)
    }

    private static func error(for result: fl_image_decode_result, format: ImageFormat, source: String)
        -> ImageProbeError
    {
        let libraryMessage = withUnsafeBytes(of: result.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        let library = format == .jpeg ? "libjpeg" : "libpng"
        switch UInt32(result.status) {
        case FL_IMAGE_OVER_PIXEL_BUDGET.rawValue:
            return ImageProbeError(
                code: .exceedsPixelBudget, message: "\(library): \(libraryMessage); raise the budget to decode it",
                source: source)
        case FL_IMAGE_TOO_MANY_SCANS.rawValue:
            return ImageProbeError(
                code: .notDecodable,
                message:
                    "\(library): \(libraryMessage) (after \(result.scan_count)); such files decode very slowly, re-encode it or raise the scan limit",
                source: source)
        case FL_IMAGE_WARNING_AS_ERROR.rawValue:
            return ImageProbeError(
                code: .notDecodable,
                message: "\(library) warned: \(libraryMessage); the pixel data is damaged, re-encode or re-download it",
                source: source)
        default:
            return ImageProbeError(
                code: .notDecodable,
                message: "\(library) failed: \(libraryMessage); the pixel data is damaged, re-encode or re-download it",
                source: source)
        }
    }
}

extension LocalImageProber {
    /// Reads a whole JPEG or PNG file and builds its placeholder; see
    /// ``ImagePixelDecoder/placeholder(_:source:options:)``.
    /// - Parameters:
    ///   - path: A file path, or `-` for standard input.
    ///   - options: Pixel budget and scan cap.
    /// - Returns: The average colour and ThumbHash.
    /// - Throws: ``ImageProbeError`` naming `path`.
    public func placeholder(path: String, options: PixelDecodeOptions = PixelDecodeOptions()) throws(ImageProbeError)
        -> ImagePlaceholder
    {
        try decodeWholeFile(path: path, options: options) { (raw) throws(ImageProbeError) in
            try ImagePixelDecoder.placeholder(raw, source: path, options: options)
        }
    }

    /// Reads a whole JPEG or PNG file and decodes it; see ``ImagePixelDecoder/verifyDecodable(_:source:options:)``.
    ///
    /// The header is probed first, so an image above the pixel budget is refused after reading
    /// only its header (standard input, which cannot be read twice, is read whole first).
    /// - Parameters:
    ///   - path: A file path, or `-` for standard input.
    ///   - options: Pixel budget, scan cap, JPEG scaling.
    /// - Returns: What the decode found.
    /// - Throws: ``ImageProbeError`` naming `path`.
    public func verifyDecodable(path: String, options: PixelDecodeOptions = PixelDecodeOptions())
        throws(ImageProbeError) -> PixelDecodeReport
    {
        try decodeWholeFile(path: path, options: options) { (raw) throws(ImageProbeError) in
            try ImagePixelDecoder.verifyDecodable(raw, source: path, options: options)
        }
    }

    /// Reads a whole file and decodes it, after refusing an image whose header is above the pixel budget.
    ///
    /// The header is probed first, so an image above the budget costs only its header; standard input,
    /// which cannot be read twice, is read whole and the decoder checks the budget.
    private func decodeWholeFile<Decoded>(
        path: String, options: PixelDecodeOptions,
        decode: (UnsafeRawBufferPointer) throws(ImageProbeError) -> Decoded
    ) throws(ImageProbeError) -> Decoded {
        if path != "-" {
            let info = try probe(path: path)
            try info.checkPixelBudget(options.pixelBudget, source: path)
        }
        let bytes = try readWholeFile(path: path)
        // `withUnsafeBytes` only rethrows untyped errors, so the typed one travels in a Result.
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(ImageProbeError) in try decode(raw) }
        }
        return try result.get()
    }
}
