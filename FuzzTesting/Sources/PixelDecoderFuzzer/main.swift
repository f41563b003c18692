import ImageProbe

/// One libFuzzer input as a whole image file, through every pixel decoder of `ImagePixelDecoder`: `verifyDecodable`
/// (`probe --verify`), `forEachRow` at a JPEG DCT scale chosen by the input's length, `placeholder`
/// (`layout --placeholders`) and `resampled` (the PNG preview) to a target size chosen by the length too, so the
/// seeds (the ImageProbe fixtures) stay valid images.
///
/// A 16-megapixel budget keeps each run quick and sends the fuzzer's absurd declared sizes down the budget check.
/// Thrown `ImageProbeError`s are the expected way to refuse bad input; the decoders' promises are checked (decoded
/// sizes positive and within the declared size, rows inside the decoded frame, four bytes a pixel at the size asked).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPixelDecoders(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: start, count: start == nil ? 0 : count)
    let options = PixelDecodeOptions(
        pixelBudget: 16_000_000, maximumProgressiveScans: 100, jpegScaleDenominator: 1 << (count % 4))
    if let report = try? ImagePixelDecoder.verifyDecodable(bytes, source: "fuzz", options: options) {
        precondition(report.decodedWidth > 0 && report.decodedHeight > 0, "decoded to nothing: \(report)")
        precondition(report.decodedWidth <= report.width && report.decodedHeight <= report.height, "grew: \(report)")
    }
    var (rows, lastY, lastX) = (0, -1, -1)
    if let report = try? ImagePixelDecoder.forEachRow(bytes, source: "fuzz", options: options, { row in
        precondition(row.y >= 0 && row.firstX >= 0 && row.xStep >= 1 && row.count >= 0, "a row out of shape: \(row)")
        (rows, lastY, lastX) = (rows + 1, max(lastY, row.y), max(lastX, row.firstX + (row.count - 1) * row.xStep))
        touch(row.pixels, count: row.count * 4)
    }) {
        precondition(rows > 0, "no rows for \(report)")
        precondition(lastY < report.decodedHeight && lastX < report.decodedWidth, "a row outside \(report)")
    }
    if let placeholder = try? ImagePixelDecoder.placeholder(bytes, source: "fuzz", options: options) {
        precondition(!placeholder.thumbHash.isEmpty, "a placeholder without a ThumbHash")
    }
    let (width, height) = (1 + count % 97, 1 + count % 61)
    if let image = try? ImagePixelDecoder.resampled(bytes, source: "fuzz", width: width, height: height, options: options)
    {
        precondition(image.width == width && image.height == height, "resampled to \(image.width)×\(image.height)")
        precondition(image.pixels.count == width * height * 4, "pixel buffer of the wrong size")
    }
    return 0
}

/// Reads every byte of a row, so ASan sees a row that claims more pixels than it holds.
private func touch(_ pixels: UnsafePointer<UInt8>, count: Int) {
    var sum = 0
    for index in 0..<count { sum &+= Int(pixels[index]) }
    if sum == -1 { print(sum) }
}
