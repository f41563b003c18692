import FeedLayout
import LayoutFuzzSupport

/// One libFuzzer input as a `--resume` cursor, through the path `layout --resume` takes (`LayoutPipeline.run`) over
/// `TinyFeed`, in a waterfall layout and a flow layout with sections (cursor versions 3 and 4).
///
/// The first byte chooses how the rest becomes a cursor:
/// - 0: the rest as text, whole;
/// - 1: a prefix of a real cursor (its length from the second byte), then the rest as text: refused by the checksum
///   unless it is a real cursor, but the decoder's prefix, base64url and length checks all run;
/// - 2: a real cursor's payload with the rest written over it from an offset (the second byte), the checksum made
///   right again: what anyone who has read the source can write, so every field check runs.
///
/// Every input must end in pages or a `LayoutError` of code `invalidCursor` or `cursorMismatch` whose message names
/// `--resume`; anything else stops the fuzzer. A real cursor must resume to the pages after its own.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCursor(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let input = Array(UnsafeRawBufferPointer(start: start, count: start == nil ? 0 : count))
    guard input.count >= 2 else { return 0 }
    let subject = subjects[Int(input[0] >> 7)]
    let chosen = subject.cursors[Int(input[1]) % subject.cursors.count]
    let rest = Array(input[2...])
    let cursor: String
    switch input[0] % 3 {
    case 0: cursor = String(decoding: input[1...], as: UTF8.self)
    case 1: cursor = String(chosen.prefix(Int(input[1]) % (chosen.count + 1))) + String(decoding: rest, as: UTF8.self)
    default: cursor = CursorText.rewriting(chosen, with: rest, at: Int(input[1]))
    }
    check(subject, resume: cursor)
    return 0
}

private func check(_ subject: CursorSubject, resume cursor: String) {
    switch subject.pipeline.layOutTinyFeed(resume: cursor) {
    case .pages(let pages):
        if let index = subject.cursors.firstIndex(of: cursor) {
            let expected = subject.pages.count - (subject.pages.firstIndex { $0.cursor == cursor }! + 1)
            precondition(pages.count == expected, "cursor \(index) resumed to \(pages.count) pages, not \(expected)")
        }
    case .failed(let error as LayoutError):
        precondition(
            [LayoutError.Code.invalidCursor, .cursorMismatch].contains(error.code) && error.message.hasPrefix("--resume:"),
            "a cursor ended in \(error)")
    case .failed(let error):
        fatalError("a cursor ended in an error that is not a LayoutError: \(error)")
    }
}
