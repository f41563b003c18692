// Does LeakSanitizer see an array buffer that a value keeps only inside a two-payload enum?
//
// The shape of TextMeasure's measurements before they became structs (LineTextSource): a case with a `[String]` and
// a case with a `[UInt16]` and a `[LineSpan]`. Every value made here stays reachable from a global until the process
// exits; the program prints the enum's bytes next to the buffers' addresses. `run` builds it with
// -sanitize=address and shows what LeakSanitizer reports at exit.
struct LineSpan {
    var range: Range<Int>
    var suffix: String
}

enum EnumSource {
    case texts([String])
    case spans(content: [UInt16], [LineSpan])
}

struct StructSource {
    var given: [String]?
    var content: [UInt16]
    var spans: [LineSpan]
}

final class Kept {
    var enums: [EnumSource] = []
    var structs: [StructSource] = []
}

let kept = Kept()
let useStruct = CommandLine.arguments.dropFirst().first == "struct"
for index in 0..<100 {
    var spans: [LineSpan] = []
    for line in 0..<(index % 5 + 1) { spans.append(LineSpan(range: line..<(line + 3), suffix: "")) }
    let content = [UInt16](repeating: UInt16(index), count: 40 + index)
    if useStruct {
        kept.structs.append(StructSource(given: nil, content: content, spans: spans))
    } else {
        kept.enums.append(.spans(content: content, spans))
    }
}
if !useStruct, case .spans(let content, let spans) = kept.enums[0] {
    let words = withUnsafeBytes(of: kept.enums[0]) { Array($0.bindMemory(to: UInt64.self)) }
    print("enum words:       " + words.map { "0x" + String($0, radix: 16) }.joined(separator: " "))
    content.withUnsafeBufferPointer { print("[UInt16] elements at:   \($0.baseAddress!)") }
    spans.withUnsafeBufferPointer { print("[LineSpan] elements at: \($0.baseAddress!)") }
}
print("kept \(kept.enums.count + kept.structs.count) values, reachable until exit")
