import LocalFileAccess

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Limits for decoding pixels, which unlike header parsing costs time and memory in proportion
/// to the image.
public struct PixelDecodeOptions: Sendable, Equatable {
    /// The largest width × height that will be decoded (a decompression-bomb guard).
    public var pixelBudget: Int
    /// The most scans a progressive JPEG may have; 0 means no limit.
    public var maximumProgressiveScans: Int
    /// JPEG DCT scaling: decode at 1/1, 1/2, 1/4 or 1/8 of the size. PNG always decodes at full size (row by row).
    ///
    /// At 1/8 libjpeg still entropy-decodes every scan, so corrupt data is still found, but it
    /// skips most of the inverse DCT and colour conversion. Placeholders and resampling choose their own scale.
    public var jpegScaleDenominator: Int
    /// The memory this decode shares with every other decode that names the same budget.
    public var memoryBudget: DecodeMemoryBudget

    /// Creates options; the defaults verify at full size within 100 megapixels and 100 scans, sharing the
    /// process's decoding budget.
    public init(
        pixelBudget: Int = ImageInfo.defaultPixelBudget, maximumProgressiveScans: Int = 100,
        jpegScaleDenominator: Int = 1, memoryBudget: DecodeMemoryBudget = .shared
    ) {
        self.pixelBudget = pixelBudget
        self.maximumProgressiveScans = maximumProgressiveScans
        self.jpegScaleDenominator = jpegScaleDenominator
        self.memoryBudget = memoryBudget
    }

    /// Options for a placeholder: a 1/8 decode is plenty for one colour.
    public static let placeholder = PixelDecodeOptions(jpegScaleDenominator: 8)
}

/// An image decoded at the size it is drawn: premultiplied RGBA, rows packed, EXIF orientation applied.
public struct ResampledImage: Sendable {
    /// The header facts (declared size, format, EXIF orientation).
    public var info: ImageInfo
    /// The size asked for, as displayed.
    public var width: Int
    public var height: Int
    /// `width * height * 4` bytes, colour premultiplied by alpha.
    public var pixels: [UInt8]
    /// The JPEG DCT scale denominator the decode used (1 for PNG).
    public var scaleDenominator: Int
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
    /// The memory the decode held.
    public var memory: DecodeMemoryUse
}

/// The memory one decode held: never a full-size frame, only the library's working memory, a row, and the
/// target it reduces into.
public struct DecodeMemoryUse: Sendable, Equatable {
    /// What the decode reserved from its ``DecodeMemoryBudget`` before it started.
    public var reservedBytes: Int
    /// The most the C library held at once, counted through its allocator hooks (for libjpeg, everything it
    /// allocated, since it frees only at the end).
    public var libraryPeakBytes: Int
    /// The decoder's own buffers: one row and whatever the rows were reduced into.
    public var bufferBytes: Int
}

/// Decodes pixels with libjpeg-turbo and libpng, through the C shim.
///
/// Every decode reads row by row and keeps only what it needs from each row — colour sums to verify, a 100-pixel
/// reduction for a placeholder, the drawn size for a preview — so none holds a full-size frame. JPEGs decode with
/// DCT scaling towards the size needed. Each decode reserves its memory from a ``DecodeMemoryBudget`` first, so
/// concurrent decodes share a bound.
///
/// Decoding is CPU-bound and blocking (and may wait for the budget): call it from a thread that may block (not the
/// cooperative pool in a tight loop), and check ``ImageInfo/exceedsPixelBudget(_:)`` first when the header is
/// already known.
public enum ImagePixelDecoder {
    /// Decodes a whole JPEG or PNG and reports whether it is decodable.
    ///
    /// Every row is decoded and dropped once its colours are summed. Library warnings (corrupt data that libjpeg
    /// would paper over) count as failures, since the point is to know the file is sound.
    ///
    /// - Parameters:
    ///   - bytes: The complete file.
    ///   - source: The input's name for error messages (empty for a buffer).
    ///   - options: Pixel budget, scan cap, JPEG scaling, memory budget.
    /// - Returns: Declared and decoded sizes, scan count, the average colour and the memory held.
    /// - Throws: ``ImageProbeError`` — the header parser's errors, `.exceedsPixelBudget`,
    ///   `.exceedsMemoryBudget`, `.notDecodable` (with the library's message), or `.unknownFormat` for formats
    ///   other than JPEG and PNG.
    public static func verifyDecodable(
        _ bytes: UnsafeRawBufferPointer, source: String = "", options: PixelDecodeOptions = PixelDecodeOptions()
    ) throws(ImageProbeError) -> PixelDecodeReport {
        try PixelRowReader(bytes, source: source, options: options)
            .decode(bufferBytes: 0) { DiscardingRowConsumer() }.report
    }

    /// Decodes a JPEG or PNG row by row, handing each row to `body` and keeping none.
    ///
    /// Rows arrive top to bottom; an interlaced (Adam7) PNG's rows arrive pass by pass, each holding every
    /// ``DecodedRow/xStep``-th pixel of its row. The memory reserved covers the library and one row only: what
    /// `body` keeps is its own to bound.
    ///
    /// - Parameters:
    ///   - bytes: The complete file.
    ///   - source: The input's name for error messages.
    ///   - options: Pixel budget, scan cap, JPEG scaling, memory budget.
    ///   - body: Called with each row; the pixels are valid only during the call. It must not decode with the
    ///     same budget (the decode holds its reservation while `body` runs).
    /// - Returns: What the decode found.
    /// - Throws: As ``verifyDecodable(_:source:options:)``.
    public static func forEachRow(
        _ bytes: UnsafeRawBufferPointer, source: String = "", options: PixelDecodeOptions = PixelDecodeOptions(),
        _ body: (DecodedRow) -> Void
    ) throws(ImageProbeError) -> PixelDecodeReport {
        struct Forwarding: DecodedRowConsumer {
            let body: (DecodedRow) -> Void
            mutating func consume(_ row: DecodedRow) { body(row) }
        }
        return try withoutActuallyEscaping(
            body,
            do: { (body) throws(ImageProbeError) in
                try PixelRowReader(bytes, source: source, options: options)
                    .decode(bufferBytes: 0) { Forwarding(body: body) }.report
            })
    }

    /// Builds the placeholder a client paints before the photo arrives: the average colour and
    /// a ThumbHash of the image as displayed (EXIF orientation applied).
    ///
    /// JPEGs are decoded with DCT scaling, at the smallest scale that still leaves 100 pixels on the long side;
    /// rows are box-averaged into at most 100 × 100 pixels as they are decoded.
    ///
    /// - Parameters:
    ///   - bytes: The complete file.
    ///   - source: The input's name for error messages.
    ///   - options: Pixel budget, scan cap and memory budget; the JPEG scale is chosen here.
    /// - Returns: The placeholder.
    /// - Throws: As ``verifyDecodable(_:source:options:)``.
    public static func placeholder(
        _ bytes: UnsafeRawBufferPointer, source: String = "", options: PixelDecodeOptions = PixelDecodeOptions()
    ) throws(ImageProbeError) -> ImagePlaceholder {
        try placeholderWithReport(bytes, source: source, options: options).placeholder
    }

    /// ``placeholder(_:source:options:)`` with the decode's report (its memory, for tests).
    static func placeholderWithReport(
        _ bytes: UnsafeRawBufferPointer, source: String, options: PixelDecodeOptions
    ) throws(ImageProbeError) -> (placeholder: ImagePlaceholder, report: PixelDecodeReport) {
        let limit = 100
        var options = options
        options.jpegScaleDenominator = 8
        if case .info(let info) = ImageHeaderParser.parse(bytes, isComplete: true) {
            let longest = max(info.width, info.height)
            while options.jpegScaleDenominator > 1 && longest / options.jpegScaleDenominator < limit {
                options.jpegScaleDenominator /= 2
            }
        }
        let reader = try PixelRowReader(bytes, source: source, options: options)
        let (width, height) = (reader.decodedWidth, reader.decodedHeight)
        guard width > 0, height > 0 else {
            throw ImageProbeError(code: .notDecodable, message: "the image decoded to no pixels", source: source)
        }
        let (report, box) = try reader.decode(
            bufferBytes: BoxDownsampler.bufferBytes(width: width, height: height, limit: limit)
        ) {
            var box = BoxDownsampler(width: width, height: height, limit: limit)
            box.allocate()
            return box
        }
        let small = box.image().applying(orientation: reader.info.orientation)
        return (ImagePlaceholder(averageColor: report.averageColor, thumbHash: ThumbHash.encode(small)), report)
    }

    /// Decodes a JPEG or PNG at the size it is drawn: premultiplied RGBA, EXIF orientation applied.
    ///
    /// JPEGs decode with libjpeg's DCT scaling at the smallest scale (1/8, 1/4, 1/2) that still leaves at least
    /// the target size, so a 4000-pixel photo shown 236 pixels wide costs a fraction of a full decode; rows are
    /// area-averaged down (or bilinearly up) into the target as they are decoded (see ``AreaResampler``).
    ///
    /// - Parameters:
    ///   - bytes: The complete file.
    ///   - source: The input's name for error messages.
    ///   - width: Target width in display pixels (at least 1 is used).
    ///   - height: Target height in display pixels (at least 1 is used).
    ///   - options: Pixel budget, scan cap and memory budget; the JPEG scale is chosen here.
    /// - Returns: The image at the target size.
    /// - Throws: As ``verifyDecodable(_:source:options:)``.
    public static func resampled(
        _ bytes: UnsafeRawBufferPointer, source: String = "", width: Int, height: Int,
        options: PixelDecodeOptions = PixelDecodeOptions()
    ) throws(ImageProbeError) -> ResampledImage {
        try resampledWithReport(bytes, source: source, width: width, height: height, options: options).image
    }

    /// ``resampled(_:source:width:height:options:)`` with the decode's report (its memory, for tests).
    static func resampledWithReport(
        _ bytes: UnsafeRawBufferPointer, source: String, width: Int, height: Int, options: PixelDecodeOptions
    ) throws(ImageProbeError) -> (image: ResampledImage, report: PixelDecodeReport) {
        let targetWidth = max(1, width)
        let targetHeight = max(1, height)
        var options = options
        options.jpegScaleDenominator = 1
        if case .info(let info) = ImageHeaderParser.parse(bytes, isComplete: true), info.format == .jpeg {
            // The stored image is turned a quarter for orientations 5-8: compare it with the target turned too.
            let swaps = info.swapsDimensionsForDisplay
            let storedTargetWidth = swaps ? targetHeight : targetWidth
            let storedTargetHeight = swaps ? targetWidth : targetHeight
            func ceilDivide(_ value: Int, _ divisor: Int) -> Int { (value + divisor - 1) / divisor }
            for candidate in [8, 4, 2]
            where ceilDivide(info.width, candidate) >= storedTargetWidth
                && ceilDivide(info.height, candidate) >= storedTargetHeight
            {
                options.jpegScaleDenominator = candidate
                break
            }
        }
        let reader = try PixelRowReader(bytes, source: source, options: options)
        let (storedWidth, storedHeight) = (reader.decodedWidth, reader.decodedHeight)
        guard storedWidth > 0, storedHeight > 0 else {
            throw ImageProbeError(code: .notDecodable, message: "the image decoded to no pixels", source: source)
        }
        let orientation = reader.info.orientation
        let (report, resampler) = try reader.decode(
            bufferBytes: AreaResampler.bufferBytes(
                storedWidth: storedWidth, storedHeight: storedHeight, targetWidth: targetWidth,
                targetHeight: targetHeight)
        ) {
            var resampler = AreaResampler(
                storedWidth: storedWidth, storedHeight: storedHeight, orientation: orientation,
                targetWidth: targetWidth, targetHeight: targetHeight)
            resampler.allocate()
            return resampler
        }
        let image = ResampledImage(
            info: reader.info, width: targetWidth, height: targetHeight, pixels: resampler.image(),
            scaleDenominator: reader.info.format == .jpeg ? options.jpegScaleDenominator : 1)
        return (image, report)
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
    /// The file is opened once: its header is probed first, so an image above the budget costs only its header,
    /// then it is read from the start. An input that cannot seek back (standard input, a pipe) is read whole and
    /// the decoder checks the budget.
    private func decodeWholeFile<Decoded>(
        path: String, options: PixelDecodeOptions,
        decode: (UnsafeRawBufferPointer) throws(ImageProbeError) -> Decoded
    ) throws(ImageProbeError) -> Decoded {
        let descriptor = try openForReading(path)
        defer { if !gate.isStandardInput(path) { close(descriptor) } }
        if lseek(descriptor, 0, SEEK_CUR) >= 0 {
            let info = try probe(fileDescriptor: descriptor, source: path)
            try info.checkPixelBudget(options.pixelBudget, source: path)
            guard lseek(descriptor, 0, SEEK_SET) == 0 else {
                throw ImageProbeError(
                    code: .unreadable, message: "cannot go back to the start of the file after its header",
                    source: path)
            }
        }
        let bytes: [UInt8]
        do {
            bytes = try LocalFileGate.readAll(descriptor, path: path)
        } catch {
            throw ImageProbeError(refusal: error)
        }
        // `withUnsafeBytes` only rethrows untyped errors, so the typed one travels in a Result.
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(ImageProbeError) in try decode(raw) }
        }
        return try result.get()
    }
}
