import CLibPNG
import Dispatch
import FeedLayoutTestSupport
import Foundation
import Synchronization
import Testing

@testable import ImageProbe

/// Decoding row by row gives what decoding the whole frame and reducing it afterwards gave, and holds only rows
/// and targets, never the frame.
struct StreamingDecodeTests {
    /// The sample feed's photos, beside the package.
    static func samplePhoto(_ name: String) -> String {
        let thisFile = "\(#filePath)"
        let tests = thisFile[..<thisFile.range(of: "/Tests/ImageProbeTests/")!.lowerBound]
        return tests + "/sample-feed/photos/" + name
    }

    static func bytes(_ name: String) throws -> [UInt8] {
        name.hasPrefix("sample:")
            ? try Fixtures.bytes(atPath: samplePhoto(String(name.dropFirst("sample:".count))))
            : try Fixtures.bytes(name)
    }

    /// The whole frame, assembled from the rows (what the decoder itself never does).
    static func frame(_ bytes: [UInt8], options: PixelDecodeOptions = PixelDecodeOptions()) throws -> RGBAImage {
        let size = try bytes.withUnsafeBytes { try ImagePixelDecoder.verifyDecodable($0, options: options) }
        let width = size.decodedWidth
        var pixels = [UInt8](repeating: 0, count: size.decodedWidth * size.decodedHeight * 4)
        _ = try bytes.withUnsafeBytes { raw in
            try ImagePixelDecoder.forEachRow(raw, options: options) { row in
                for index in 0..<row.count {
                    let to = (row.y * width + row.firstX + index * row.xStep) * 4
                    for channel in 0..<4 { pixels[to + channel] = row.pixels[index * 4 + channel] }
                }
            }
        }
        return RGBAImage(width: size.decodedWidth, height: size.decodedHeight, pixels: pixels)
    }

    // MARK: - libpng row by row = png_image

    /// What png_image (libpng's simplified API, which the decoder used before) makes of a PNG: the RGBA frame, or
    /// its message.
    static func simplifiedAPIDecode(_ bytes: [UInt8]) -> (pixels: [UInt8]?, warned: Bool, message: String) {
        var image = png_image()
        image.version = UInt32(PNG_IMAGE_VERSION)
        defer { png_image_free(&image) }
        func message() -> String {
            withUnsafeBytes(of: image.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        let began = bytes.withUnsafeBytes { png_image_begin_read_from_memory(&image, $0.baseAddress, $0.count) }
        guard began != 0 else { return (nil, false, message()) }
        image.format = 3  // PNG_FORMAT_RGBA: colour and alpha, 8 bits
        var pixels = [UInt8](repeating: 0, count: Int(image.width) * Int(image.height) * 4)
        let finished = pixels.withUnsafeMutableBytes { png_image_finish_read(&image, nil, $0.baseAddress, 0, nil) }
        guard finished != 0 else { return (nil, false, message()) }
        return (pixels, image.warning_or_error & 1 != 0, message())
    }

    /// PNGs of every colour type and depth, plain and Adam7, with and without a linear gAMA, at sizes whose
    /// passes are partly empty.
    static let generatedPNGs: [(name: String, encoder: PNGTestEncoder)] = {
        var cases: [(String, PNGTestEncoder)] = []
        let shapes: [(PNGTestEncoder.ColorType, Int)] = [
            (.rgb, 8), (.rgba, 8), (.gray, 8), (.grayAlpha, 8), (.rgb, 16), (.rgba, 16), (.gray, 16), (.gray, 2),
            (.palette, 8), (.palette, 4),
        ]
        for (colorType, depth) in shapes {
            for interlaced in [false, true] {
                for gamma: UInt32? in [nil, 100_000] {
                    for (width, height) in [(37, 23), (3, 2), (1, 9)] {
                        var encoder = PNGTestEncoder(
                            width: width, height: height, colorType: colorType, bitDepth: depth, interlaced: interlaced,
                            gamma: gamma)
                        if colorType == .palette {
                            encoder.palette = (0..<(1 << depth)).flatMap { (index: Int) -> [UInt8] in
                                [UInt8(index * 13 % 256), UInt8(index * 71 % 256), UInt8(index * 5 % 256)]
                            }
                            encoder.transparency = (0..<min(5, 1 << depth)).map { UInt8($0 * 60) }
                        } else if colorType == .gray && depth == 2 {
                            encoder.transparency = [0, 1]
                        }
                        let name = "\(colorType)-\(depth)\(interlaced ? "-adam7" : "")\(gamma == nil ? "" : "-linear")-\(width)x\(height)"
                        cases.append((name, encoder))
                    }
                }
            }
        }
        return cases
    }()

    /// The file of a generated case; each sample depends only on its place, so the same image stored plainly and
    /// as Adam7 has the same pixels.
    static func generatedBytes(_ encoder: PNGTestEncoder, seed: UInt64 = 7) -> [UInt8] {
        encoder.encode { x, y, channel in
            var random = SplitMix64(seed: seed &+ UInt64((y * encoder.width + x) * 4 + channel))
            return Int(truncatingIfNeeded: random.next() & 0xFFFF)
        }
    }

    /// libpng's simplified API mis-places the rows of 16-bit Adam7 images when it scales them to 8 bits (the rows of
    /// a pass land on the wrong lines); reading the passes as they are puts every pixel where the same image stored
    /// without interlacing has it.
    static func simplifiedAPIMisplacesRows(_ name: String) -> Bool {
        name.contains("-16-adam7") && !name.hasSuffix("3x2")
    }

    /// (The images png_image misplaces are left out here; `adam7DecodesToThePlainImagesPixels` checks them.)
    @Test(arguments: generatedPNGs.map(\.name).filter { !simplifiedAPIMisplacesRows($0) })
    func generatedPNGRowsEqualThePNGImageFrame(name: String) throws {
        let encoder = try #require(Self.generatedPNGs.first { $0.name == name }?.encoder)
        try Self.expectSameAsSimplifiedAPI(Self.generatedBytes(encoder), name: name)
    }

    /// An Adam7 image decodes to the pixels of the same image stored plainly (which png_image decodes like we do).
    @Test(arguments: generatedPNGs.filter { $0.encoder.interlaced }.map(\.name))
    func adam7DecodesToThePlainImagesPixels(name: String) throws {
        let interlaced = try #require(Self.generatedPNGs.first { $0.name == name }?.encoder)
        var plain = interlaced
        plain.interlaced = false
        let plainBytes = Self.generatedBytes(plain)
        let same = try Self.frame(Self.generatedBytes(interlaced)).pixels == Self.frame(plainBytes).pixels
        #expect(same, "\(name): the Adam7 rows do not make the plain image")
        let reference = Self.simplifiedAPIDecode(Self.generatedBytes(interlaced)).pixels
        let referenceMatchesPlain = reference == Self.simplifiedAPIDecode(plainBytes).pixels
        #expect(referenceMatchesPlain != Self.simplifiedAPIMisplacesRows(name), "\(name): png_image changed")
    }

    @Test(arguments: [
        "png-rgb.png", "png-palette.png", "png-interlaced.png", "png-apng.png", "png-exif-before-idat.png",
        "png-exif-after-idat.png", "png-gradient.png", "png-gradient-alpha.png", "png-16bit-gray.png",
        "png-bad-idat-crc.png", "png-apple-cgbi.png", "png-truncated-in-ihdr.png", "png-bad-ihdr-crc.png",
        "sample:hubble-deep-field.png", "sample:pompeii-coins.png",
    ])
    func fixtureRowsEqualThePNGImageFrame(name: String) throws {
        try Self.expectSameAsSimplifiedAPI(Self.bytes(name), name: name)
    }

    static func expectSameAsSimplifiedAPI(_ bytes: [UInt8], name: String) throws {
        let reference = simplifiedAPIDecode(bytes)
        let streamed = Result { try frame(bytes) }
        switch (reference.pixels, streamed) {
        case (let pixels?, .success(let image)) where !reference.warned:
            let same = image.pixels == pixels
            #expect(same, "\(name): rows differ from png_image's frame")
        case (_, .failure(let error as ImageProbeError)) where error.code == .notDecodable:
            #expect(reference.pixels == nil || reference.warned, "\(name): png_image decoded it, rows failed: \(error)")
            #expect(error.message.contains(reference.message), "\(name): \(error.message) vs \(reference.message)")
        case (_, .failure(let error as ImageProbeError)):
            // The header parser refuses it before libpng is called, as it did before.
            #expect(reference.pixels == nil, "\(name): png_image decoded what the header parser refused: \(error)")
        default:
            Issue.record("\(name): png_image \(reference.message.isEmpty ? "decoded it" : reference.message), rows \(streamed)")
        }
    }

    // MARK: - Placeholders

    /// The reduction placeholders made before they were computed row by row, kept as the reference.
    static func referenceFitting(_ image: RGBAImage, within limit: Int) -> RGBAImage {
        let (width, height, pixels) = (image.width, image.height, image.pixels)
        let longest = max(width, height)
        guard longest > limit else { return image }
        let targetWidth = max(1, (width * limit + longest / 2) / longest)
        let targetHeight = max(1, (height * limit + longest / 2) / longest)
        var output = [UInt8](repeating: 0, count: targetWidth * targetHeight * 4)
        for targetY in 0..<targetHeight {
            let firstRow = targetY * height / targetHeight
            let rows = firstRow..<max(firstRow + 1, (targetY + 1) * height / targetHeight)
            for targetX in 0..<targetWidth {
                let firstColumn = targetX * width / targetWidth
                let columns = firstColumn..<max(firstColumn + 1, (targetX + 1) * width / targetWidth)
                var sums = (red: 0, green: 0, blue: 0, alpha: 0)
                for y in rows {
                    for x in columns {
                        let index = (y * width + x) * 4
                        let alpha = Int(pixels[index + 3])
                        sums.red += Int(pixels[index]) * alpha
                        sums.green += Int(pixels[index + 1]) * alpha
                        sums.blue += Int(pixels[index + 2]) * alpha
                        sums.alpha += alpha
                    }
                }
                let count = rows.count * columns.count
                let index = (targetY * targetWidth + targetX) * 4
                if sums.alpha > 0 {
                    output[index] = UInt8((sums.red + sums.alpha / 2) / sums.alpha)
                    output[index + 1] = UInt8((sums.green + sums.alpha / 2) / sums.alpha)
                    output[index + 2] = UInt8((sums.blue + sums.alpha / 2) / sums.alpha)
                }
                output[index + 3] = UInt8((sums.alpha + count / 2) / count)
            }
        }
        return RGBAImage(width: targetWidth, height: targetHeight, pixels: output)
    }

    static let photos = [
        "jpeg-gradient.jpg", "jpeg-gradient-orientation-6.jpg", "jpeg-cmyk-adobe.jpg", "jpeg-sof2-progressive.jpg",
        "png-gradient.png", "png-gradient-alpha.png", "png-interlaced.png",
        "sample:hubble-deep-field.png", "sample:pompeii-coins.png", "sample:djembe-and-wine.jpg",
        "sample:nuthatch-cmyk.jpg", "sample:photographer-bw.jpg", "sample:storm-over-the-road-panorama.jpg",
    ] + (1...8).map { "jpeg-orientation-\($0)-be.jpg" }

    /// Placeholders are identical to the full decode reduced by the old code: same colour, same ThumbHash.
    @Test(arguments: photos)
    func placeholderEqualsTheFullDecodeReduced(name: String) throws {
        let bytes = try Self.bytes(name)
        let (placeholder, report) = try bytes.withUnsafeBytes { raw in
            try ImagePixelDecoder.placeholderWithReport(raw, source: name, options: PixelDecodeOptions())
        }
        let info = try #require(Fixtures.parse(bytes).info)
        // The scale placeholders choose: the smallest that leaves 100 pixels on the long side.
        var denominator = info.format == .jpeg ? 8 : 1
        while denominator > 1 && max(info.width, info.height) / denominator < 100 { denominator /= 2 }
        let frame = try Self.frame(bytes, options: PixelDecodeOptions(jpegScaleDenominator: denominator))
        #expect((frame.width, frame.height) == (report.decodedWidth, report.decodedHeight))
        let small = Self.referenceFitting(frame, within: 100).applying(orientation: info.orientation)
        #expect(placeholder.thumbHash == ThumbHash.encode(small), "\(name)")
        let full = try bytes.withUnsafeBytes {
            try ImagePixelDecoder.verifyDecodable($0, options: PixelDecodeOptions(jpegScaleDenominator: denominator))
        }
        #expect(placeholder.averageColor == full.averageColor)
    }

    @Test(arguments: generatedPNGs.filter { $0.name.hasSuffix("37x23") }.map(\.name))
    func generatedPlaceholderEqualsTheFullDecodeReduced(name: String) throws {
        // 37×23 is under the 100-pixel limit; scaled up ×5 the reduction does work.
        var encoder = try #require(Self.generatedPNGs.first { $0.name == name }?.encoder)
        (encoder.width, encoder.height) = (37 * 5, 23 * 5)
        let bytes = Self.generatedBytes(encoder)
        try #require(Self.simplifiedAPIDecode(bytes).pixels != nil, "\(name): png_image refuses the generated PNG")
        let placeholder = try bytes.withUnsafeBytes { try ImagePixelDecoder.placeholder($0) }
        let small = Self.referenceFitting(try Self.frame(bytes), within: 100)
        #expect(placeholder.thumbHash == ThumbHash.encode(small), "\(name)")
    }

    // MARK: - Resampling for previews

    /// How previews resampled before rows were resampled as they came: the upright frame, premultiplied, area
    /// averaged (or bilinear) along x, then along y.
    static func referenceResample(_ image: RGBAImage, orientation: Int, toWidth: Int, toHeight: Int) -> [UInt8] {
        let upright = image.applying(orientation: orientation)
        let (width, height) = (upright.width, upright.height)
        let pixels: [Float] = stride(from: 0, to: upright.pixels.count, by: 4).flatMap { index -> [Float] in
            let alpha = Float(upright.pixels[index + 3])
            let factor = alpha / 255
            return [
                Float(upright.pixels[index]) * factor, Float(upright.pixels[index + 1]) * factor,
                Float(upright.pixels[index + 2]) * factor, alpha,
            ]
        }
        func weights(from source: Int, to target: Int) -> [(first: Int, weights: [Float])] {
            let ratio = Double(source) / Double(target)
            return (0..<target).map { index in
                if ratio >= 1 {
                    let start = Double(index) * ratio
                    let end = min(Double(source), start + ratio)
                    let first = Int(start.rounded(.down))
                    let last = min(source - 1, Int((end - 1e-9).rounded(.down)))
                    return (
                        first,
                        (first...max(first, last)).map { sourceIndex in
                            Float(max(0, min(end, Double(sourceIndex + 1)) - max(start, Double(sourceIndex))) / ratio)
                        }
                    )
                }
                let centre = (Double(index) + 0.5) * ratio - 0.5
                let lower = Int(centre.rounded(.down))
                let fraction = Float(centre - Double(lower))
                let first = min(max(lower, 0), source - 1)
                let second = min(max(lower + 1, 0), source - 1)
                return first == second ? (first, [1]) : (first, [1 - fraction, fraction])
            }
        }
        let columns = weights(from: width, to: toWidth)
        let rows = weights(from: height, to: toHeight)
        var horizontal = [Float](repeating: 0, count: toWidth * height * 4)
        for y in 0..<height {
            for (x, column) in columns.enumerated() {
                var sums: (Float, Float, Float, Float) = (0, 0, 0, 0)
                for (offset, weight) in column.weights.enumerated() {
                    let index = (y * width + column.first + offset) * 4
                    sums.0 += pixels[index] * weight
                    sums.1 += pixels[index + 1] * weight
                    sums.2 += pixels[index + 2] * weight
                    sums.3 += pixels[index + 3] * weight
                }
                let index = (y * toWidth + x) * 4
                (horizontal[index], horizontal[index + 1], horizontal[index + 2], horizontal[index + 3]) = sums
            }
        }
        var output = [UInt8](repeating: 0, count: toWidth * toHeight * 4)
        for (y, row) in rows.enumerated() {
            for x in 0..<toWidth {
                var sums: (Float, Float, Float, Float) = (0, 0, 0, 0)
                for (offset, weight) in row.weights.enumerated() {
                    let index = ((row.first + offset) * toWidth + x) * 4
                    sums.0 += horizontal[index] * weight
                    sums.1 += horizontal[index + 1] * weight
                    sums.2 += horizontal[index + 2] * weight
                    sums.3 += horizontal[index + 3] * weight
                }
                let alpha = min(255, sums.3 + 0.5)
                let index = (y * toWidth + x) * 4
                output[index] = UInt8(min(alpha, sums.0 + 0.5))
                output[index + 1] = UInt8(min(alpha, sums.1 + 0.5))
                output[index + 2] = UInt8(min(alpha, sums.2 + 0.5))
                output[index + 3] = UInt8(alpha)
            }
        }
        return output
    }

    /// Previews are the full decode resampled by the old code: bit for bit for orientations 1 and 2 of
    /// non-interlaced images, within one level per channel otherwise (the same terms summed in another order).
    @Test(arguments: photos)
    func resampledEqualsTheFullDecodeResampled(name: String) throws {
        let bytes = try Self.bytes(name)
        let info = try #require(Fixtures.parse(bytes).info)
        var differing = 0
        for (width, height) in [(75, 113), (236, 180), (13, 7), (4, 3), (640, 480)] {
            let image = try bytes.withUnsafeBytes {
                try ImagePixelDecoder.resampled($0, source: name, width: width, height: height)
            }
            let frame = try Self.frame(bytes, options: PixelDecodeOptions(jpegScaleDenominator: image.scaleDenominator))
            let reference = Self.referenceResample(
                frame, orientation: info.orientation, toWidth: width, toHeight: height)
            #expect(image.pixels.count == reference.count)
            let largest = zip(image.pixels, reference).map { abs(Int($0) - Int($1)) }.max() ?? 0
            differing += zip(image.pixels, reference).filter { $0 != $1 }.count
            let exact = info.orientation <= 2 && !info.isInterlaced
            #expect(exact ? largest == 0 : largest <= 1, "\(name) at \(width)×\(height): off by \(largest)")
        }
        if differing > 0 { print("\(name): \(differing) channel values differ by one from the full-frame resample") }
    }

    // MARK: - Memory

    /// The reports of verification, placeholder and a preview of one image, in that order.
    static func reportsOfEveryDecode(_ bytes: [UInt8], previewWidth: Int, previewHeight: Int) throws
        -> [PixelDecodeReport]
    {
        try bytes.withUnsafeBytes { raw in
            [
                try ImagePixelDecoder.verifyDecodable(raw),
                try ImagePixelDecoder.placeholderWithReport(raw, source: "", options: PixelDecodeOptions()).report,
                try ImagePixelDecoder.resampledWithReport(
                    raw, source: "", width: previewWidth, height: previewHeight, options: PixelDecodeOptions()
                ).report,
            ]
        }
    }

    /// A tall PNG (its frame would be 16 MiB) decodes holding a row, libpng's state and the target: verification,
    /// placeholder and preview alike; and what libpng holds does not grow with the height.
    @Test func decodesHoldRowsAndTargetsNotTheFrame() throws {
        func report(height: Int) throws -> [PixelDecodeReport] {
            let encoder = PNGTestEncoder(width: 512, height: height, colorType: .rgb, bitDepth: 8)
            let bytes = encoder.encode { x, y, channel in (x * 3 + y * 7 + channel * 50) & 0xFF }
            return try Self.reportsOfEveryDecode(bytes, previewWidth: 236, previewHeight: 400)
        }
        let frameBytes = 512 * 8192 * 4
        let tall = try report(height: 8192)
        let short = try report(height: 1024)
        for (tall, short) in zip(tall, short) {
            let held = tall.memory.libraryPeakBytes + tall.memory.bufferBytes
            #expect(held <= tall.memory.reservedBytes, "\(tall.memory)")
            #expect(held < frameBytes / 8, "\(tall.memory) against a \(frameBytes)-byte frame")
            #expect(tall.memory.libraryPeakBytes == short.memory.libraryPeakBytes)
        }
        // Verification keeps one row: its buffers do not depend on the height at all.
        #expect(tall[0].memory.bufferBytes == 512 * 4)
        #expect(tall[0].memory == short[0].memory)
    }

    /// A mid-grey baseline greyscale JPEG of any size in a few bytes per 32 blocks: one-symbol Huffman tables make
    /// each 8×8 block two bits ("DC unchanged", "end of block").
    static func greyBaselineJPEG(width: Int, height: Int) -> [UInt8] {
        func segment(_ marker: UInt8, _ body: [UInt8]) -> [UInt8] {
            [0xFF, marker, UInt8((body.count + 2) >> 8), UInt8((body.count + 2) & 0xFF)] + body
        }
        let oneSymbolLengths = [UInt8](repeating: 0, count: 15)
        var file: [UInt8] = [0xFF, 0xD8]
        file += segment(0xDB, [0x00] + [UInt8](repeating: 1, count: 64))
        file += segment(0xC0, [8, UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8), UInt8(width & 0xFF), 1, 1, 0x11, 0])
        file += segment(0xC4, [0x00, 1] + oneSymbolLengths + [0x00])
        file += segment(0xC4, [0x10, 1] + oneSymbolLengths + [0x00])
        file += segment(0xDA, [1, 1, 0x00, 0, 63, 0])
        let bits = ((width + 7) / 8) * ((height + 7) / 8) * 2
        file += [UInt8](repeating: 0, count: bits / 8)
        if bits % 8 != 0 { file.append(UInt8(0xFF >> (bits % 8))) }
        return file + [0xFF, 0xD9]
    }

    /// A 4096×4096 baseline JPEG (a 64 MiB frame) verifies, and gives its placeholder and preview, holding what
    /// libjpeg needs for a row of blocks, which does not grow with the height.
    @Test func baselineJPEGDecodesHoldRowsNotTheFrame() throws {
        func reports(height: Int) throws -> [PixelDecodeReport] {
            try Self.reportsOfEveryDecode(
                Self.greyBaselineJPEG(width: 4096, height: height), previewWidth: 236, previewHeight: 236)
        }
        let tall = try reports(height: 4096)
        let short = try reports(height: 512)
        #expect(tall[0].averageColor == PlaceholderColor(red: 128, green: 128, blue: 128))
        for (index, (tall, short)) in zip(tall, short).enumerated() {
            let held = tall.memory.libraryPeakBytes + tall.memory.bufferBytes
            #expect(held <= tall.memory.reservedBytes, "\(tall.memory)")
            #expect(held < 4096 * 4096 * 4 / 16, "\(tall.memory)")
            // The preview of the short image decodes at 1/2, not 1/8, to keep 236 rows: only the others compare.
            if index < 2 { #expect(tall.memory.libraryPeakBytes == short.memory.libraryPeakBytes) }
        }
    }

    /// A progressive JPEG keeps its coefficients until the last scan; libjpeg stays within what was reserved.
    @Test(arguments: ["jpeg-sof2-progressive.jpg", "jpeg-baseline.jpg", "jpeg-cmyk-adobe.jpg"])
    func libjpegStaysWithinItsReservation(name: String) throws {
        let report = try PixelDecoderTests.verify(name).get()
        #expect(report.memory.libraryPeakBytes > 0)
        #expect(report.memory.libraryPeakBytes + report.memory.bufferBytes <= report.memory.reservedBytes)
    }

    @Test func aDecodeLargerThanTheWholeBudgetIsRefused() throws {
        let options = PixelDecodeOptions(memoryBudget: DecodeMemoryBudget(bytes: 64 * 1024))
        guard case .failure(let error) = try PixelDecoderTests.verify("png-rgb.png", options: options) else {
            Issue.record("decoded above the memory budget")
            return
        }
        #expect(error.code == .exceedsMemoryBudget)
        #expect(error.message.hasPrefix("png-rgb.png: decoding it needs about 1 MiB"), "\(error.message)")
    }

    /// Eight decodes at once with room for one: each waits its turn, none fails, and the reservations never add
    /// up beyond the budget.
    @Test func concurrentDecodesShareTheBudget() throws {
        let encoder = PNGTestEncoder(width: 256, height: 512, colorType: .rgba, bitDepth: 8)
        let bytes = encoder.encode { x, y, channel in (x + y + channel * 64) & 0xFF }
        let one = try bytes.withUnsafeBytes { try ImagePixelDecoder.verifyDecodable($0) }.memory.reservedBytes
        let budget = DecodeMemoryBudget(bytes: one * 3 / 2)
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let result = bytes.withUnsafeBytes { raw in
                Result { () throws(ImageProbeError) in
                    try ImagePixelDecoder.verifyDecodable(raw, options: PixelDecodeOptions(memoryBudget: budget))
                }
            }
            if case .failure = result { failures.withLock { $0 += 1 } }
        }
        #expect(failures.withLock { $0 } == 0)
        #expect(budget.peakReservedBytes == one)
        #expect(budget.reservedBytes == 0)
    }
}
