import FeedLayout
import LayoutFuzzSupport

/// One libFuzzer input as command-line options of `feedlayout layout`, through the library's option check
/// (`LayoutOptions.validate()`, the one the CLI and the service share) and, when the options pass, a whole layout of
/// `TinyFeed` (`LayoutPipeline`).
///
/// The input is split into arguments at NUL and newline bytes; `--NAME VALUE` pairs of the options in
/// `OptionTable` set the options, with numbers read as the CLI reads them (`Double(String)` and `Int(String)`,
/// so `1e308`, `inf`, `nan` and `-0` all arrive). Unknown arguments and values that are not numbers are skipped, as
/// the CLI would refuse them before the library sees them.
///
/// Every input must end in a `LayoutError` of code `invalidOptions` that names an option, or — options accepted — in
/// a layout of the feed with at least one page; a trap, a sanitizer report or any other outcome stops the fuzzer.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOptions(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: start, count: start == nil ? 0 : count)
    let arguments = input.split(whereSeparator: { $0 == 0 || $0 == 0x0A }).map { String(decoding: $0, as: UTF8.self) }
    var options = LayoutOptions(pagination: PaginationRule(pageSize: 4))
    var index = 0
    while index + 1 < arguments.count {
        if let setter = OptionTable.setters[arguments[index]], setter(&options, arguments[index + 1]) {
            index += 2
        } else {
            index += 1
        }
    }
    do {
        try options.validate()
    } catch {
        precondition(
            error.code == .invalidOptions && error.message.contains("-"), "refused without naming an option: \(error)")
        return 0
    }
    let pipeline: LayoutPipeline
    do {
        pipeline = try LayoutPipeline(options: options)
    } catch {
        fatalError("options that pass validate() do not make a pipeline: \(error)\n\(options)")
    }
    switch pipeline.layOutTinyFeed() {
    case .pages(let pages):
        precondition(!pages.isEmpty || options.maximumPages == 0, "a valid layout made no page\n\(options)")
    case .failed(let error):
        fatalError("options that pass validate() do not lay the feed out: \(error)\n\(options)")
    }
    return 0
}
