import FeedLayout
import LayoutCommandLine
import LayoutFuzzSupport

/// One libFuzzer input as the arguments of `feedlayout layout`, read exactly as the command reads them
/// (`NegativeValues.joined`, then `LayoutCommandOptions.parse`, which runs the library's `LayoutOptions.validate()`
/// through the options' own `validate()`), and, when they parse, a whole layout of `TinyFeed` (`LayoutPipeline`).
///
/// The input is split into arguments at NUL and newline bytes. Arguments the command refuses (an unknown option, a
/// value that is no number, a value out of bounds) end the input as they end the command, with a usage error. Every
/// other input must lay the feed out in at least one page; a trap, a sanitizer report or any other outcome stops the
/// fuzzer.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOptions(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: start, count: start == nil ? 0 : count)
    let arguments = input.split(whereSeparator: { $0 == 0 || $0 == 0x0A }).map { String(decoding: $0, as: UTF8.self) }
    let options: LayoutOptions
    do {
        options = try LayoutCommandOptions.parse(NegativeValues.joined(arguments)).options()
    } catch {
        return 0
    }
    let pipeline: LayoutPipeline
    do {
        pipeline = try LayoutPipeline(options: options)
    } catch {
        fatalError("options the command accepts do not make a pipeline: \(error)\n\(arguments)")
    }
    switch pipeline.layOutTinyFeed() {
    case .pages(let pages):
        precondition(!pages.isEmpty, "a valid layout made no page\n\(arguments)")
    case .failed(let error):
        fatalError("options the command accepts do not lay the feed out: \(error)\n\(arguments)")
    }
    return 0
}
