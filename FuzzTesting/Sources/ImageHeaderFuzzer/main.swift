import ImageProbe

/// One libFuzzer input through `ImageHeaderParser.parse`, as a complete file and as a prefix, and
/// then every prefix the parser asks for, checking the promises callers rely on:
/// `needMoreBytes` only for incomplete input and always for more than was given; sizes positive;
/// orientation 1…8; never more bytes read than given.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzImageHeader(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: start, count: start == nil ? 0 : count)
    for isComplete in [true, false] {
        check(ImageHeaderParser.parse(input, isComplete: isComplete), given: input.count, isComplete: isComplete)
    }
    // Grow a prefix the way a streaming prober does: start small, then exactly what is asked for.
    var length = min(input.count, 16)
    for _ in 0..<64 {
        let prefix = UnsafeRawBufferPointer(rebasing: input[..<length])
        let isComplete = length == input.count
        let result = ImageHeaderParser.parse(prefix, isComplete: isComplete)
        check(result, given: length, isComplete: isComplete)
        guard case .needMoreBytes(let wanted) = result else { break }
        length = min(input.count, wanted)
    }
    return 0
}

private func check(_ result: ImageHeaderParseResult, given: Int, isComplete: Bool) {
    switch result {
    case .needMoreBytes(let wanted):
        precondition(!isComplete, "needMoreBytes for a complete input")
        precondition(wanted > given, "needMoreBytes(\(wanted)) with \(given) bytes given")
    case .info(let info):
        precondition(info.width > 0 && info.height > 0, "non-positive size \(info.width)×\(info.height)")
        precondition((1...8).contains(info.orientation), "orientation \(info.orientation)")
        precondition(info.bytesRead <= given, "read \(info.bytesRead) of \(given) bytes")
    case .failure(let error):
        precondition(!error.message.isEmpty, "failure without a message")
    }
}
