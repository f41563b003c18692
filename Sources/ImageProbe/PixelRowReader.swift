import CFeedLayoutShims

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// One decoded row, or the part of it one Adam7 pass holds: `count` RGBA pixels (8 bits per channel, not
/// premultiplied) at x = `firstX + i * xStep` of row `y`, in the image as stored (before EXIF orientation).
public struct DecodedRow {
    /// The row in the decoded image.
    public var y: Int
    /// The x of the first pixel.
    public var firstX: Int
    /// How far apart the pixels are: 1 for a whole row, up to 8 in an Adam7 pass.
    public var xStep: Int
    /// How many pixels there are.
    public var count: Int
    /// `count * 4` bytes, valid only during the call that receives the row.
    public var pixels: UnsafePointer<UInt8>
}

/// What a decode does with its rows; it holds only what it reports in its plan, never the frame.
protocol DecodedRowConsumer {
    mutating func consume(_ row: DecodedRow)
}

/// A decode in progress: the C reader, opened on the header, handing out rows one at a time.
final class PixelRowReader {
    /// The header facts.
    let info: ImageInfo
    let source: String
    /// The decoded size: the declared size, or less after JPEG DCT scaling.
    let decodedWidth: Int
    let decodedHeight: Int
    /// What the library will allocate, as estimated from the header.
    let libraryBytes: Int
    private let options: PixelDecodeOptions
    private let reader: OpaquePointer

    /// Parses the header, enforces the format and the pixel budget, and opens the C reader.
    init(_ bytes: UnsafeRawBufferPointer, source: String, options: PixelDecodeOptions) throws(ImageProbeError) {
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
            scale_denominator: Int32(clamping: options.jpegScaleDenominator))
        var opened: OpaquePointer?
        var readerInfo = fl_image_reader_info()
        let base = bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!
        let kind = info.format == .jpeg ? FL_IMAGE_KIND_JPEG : FL_IMAGE_KIND_PNG
        let status = fl_image_reader_open(kind, base, bytes.count, &shimOptions, &opened, &readerInfo)
        guard let opened else {
            throw ImageProbeError(code: .notDecodable, message: "out of memory to start decoding", source: source)
        }
        (self.info, self.source, self.options, reader) = (info, source, options, opened)
        decodedWidth = Int(readerInfo.decoded_width)
        decodedHeight = Int(readerInfo.decoded_height)
        libraryBytes = Int(clamping: readerInfo.library_bytes)
        if status != Int32(FL_IMAGE_OK.rawValue) { throw failure(status) }
    }

    deinit { fl_image_reader_close(reader) }

    /// Reserves the decode's memory (the library's, a row, and `bufferBytes` of the consumer's), then reads every
    /// row into the consumer that `makeConsumer` creates once the memory is reserved.
    ///
    /// - Parameters:
    ///   - bufferBytes: What the consumer will hold.
    ///   - makeConsumer: Creates the consumer (its allocations come after the reservation).
    /// - Returns: The report and the consumer, every row consumed.
    /// - Throws: ``ImageProbeError``: the budget's refusal, or the library's failure.
    func decode<Consumer: DecodedRowConsumer>(
        bufferBytes: Int, makeConsumer: () -> Consumer
    ) throws(ImageProbeError) -> (report: PixelDecodeReport, consumer: Consumer) {
        let rowBytes = max(1, decodedWidth) * 4
        let reserved = libraryBytes + rowBytes + bufferBytes
        return try options.memoryBudget.withReservation(reserved, source: source) { () throws(ImageProbeError) in
            var consumer = makeConsumer()
            let row = UnsafeMutablePointer<UInt8>.allocate(capacity: rowBytes)
            defer { row.deallocate() }
            var place = fl_image_row()
            while true {
                let status = fl_image_reader_read_row(reader, row, &place)
                if status == Int32(FL_IMAGE_NO_MORE_ROWS.rawValue) { break }
                guard status == Int32(FL_IMAGE_OK.rawValue) else { throw failure(status) }
                consumer.consume(
                    DecodedRow(
                        y: Int(place.y), firstX: Int(place.first_x), xStep: Int(place.x_step), count: Int(place.count),
                        pixels: UnsafePointer(row)))
            }
            let status = fl_image_reader_finish(reader)
            guard status == Int32(FL_IMAGE_OK.rawValue) else { throw failure(status) }
            let memory = DecodeMemoryUse(
                reservedBytes: reserved, libraryPeakBytes: Int(clamping: fl_image_reader_peak_library_bytes(reader)),
                bufferBytes: rowBytes + bufferBytes)
            return (report(memory: memory), consumer)
        }
    }

    private func report(memory: DecodeMemoryUse) -> PixelDecodeReport {
        let sums = fl_image_reader_sums(reader)
        func mean(_ sum: UInt64) -> UInt8 {
            sums.alpha == 0 ? 0 : UInt8(clamping: (sum + sums.alpha / 2) / sums.alpha)
        }
        let alpha = sums.pixel_count == 0 ? 0 : (sums.alpha + sums.pixel_count / 2) / sums.pixel_count
        return PixelDecodeReport(
            format: info.format, width: info.width, height: info.height, decodedWidth: decodedWidth,
            decodedHeight: decodedHeight, scanCount: Int(fl_image_reader_scan_count(reader)),
            averageColor: PlaceholderColor(
                red: mean(sums.red), green: mean(sums.green), blue: mean(sums.blue), alpha: UInt8(clamping: alpha)),
            memory: memory)
    }

    private func failure(_ status: Int32) -> ImageProbeError {
        let libraryMessage = String(cString: fl_image_reader_message(reader))
        let library = info.format == .jpeg ? "libjpeg" : "libpng"
        switch UInt32(status) {
        case FL_IMAGE_OVER_PIXEL_BUDGET.rawValue:
            return ImageProbeError(
                code: .exceedsPixelBudget, message: "\(library): \(libraryMessage); raise the budget to decode it",
                source: source)
        case FL_IMAGE_TOO_MANY_SCANS.rawValue:
            return ImageProbeError(
                code: .notDecodable,
                message:
                    "\(library): \(libraryMessage) (after \(fl_image_reader_scan_count(reader))); such files decode very slowly, re-encode it or raise the scan limit",
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

/// A consumer that keeps nothing: verification only needs the rows decoded (and the colour sums the reader keeps).
struct DiscardingRowConsumer: DecodedRowConsumer {
    mutating func consume(_ row: DecodedRow) {}
}
