// Timing for TextMeasure in an optimised build. Two modes:
//
//   text-bench micro
//       warm-cache time per call for three fixed captions (Benchmarks/text-bench/micro).
//   text-bench corpus CORPUS.tsv FONT WARM_PASSES LINES_OUT
//       the TextMeasure side of Benchmarks/peers/text-vs-pango: measures every caption of the
//       corpus (kind, size, width, text per line), once cold and WARM_PASSES times warm,
//       writes the line counts of the first pass to LINES_OUT and prints one JSON object
//       with wall and thread CPU times.
//
// Times are CLOCK_MONOTONIC, the clock Python's time.monotonic reads, so the driver can
// compute the start-up time from its own spawn time and `ready`.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import TextMeasure

/// Seconds on the monotonic clock.
func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Seconds of CPU time this thread has used: unlike wall time, it does not count the
/// time the thread waited while other processes ran on a shared machine.
func cpuNow() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Prints to standard error and exits with status 2.
func fail(_ message: String) -> Never {
    let line = "text-bench: \(message)\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
    exit(2)
}

/// Reads a whole file as UTF-8 text.
func readFile(_ path: String) -> String {
    guard let file = fopen(path, "rb") else { fail("cannot open \(path)") }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = fread(&buffer, 1, buffer.count, file)
        if count == 0 { break }
        bytes.append(contentsOf: buffer[0..<count])
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// Warm-cache time per call for a few fixed captions.
func micro() throws {
    /// Runs `body` `iterations` times and prints the mean, in thread CPU time and wall time.
    func report(_ label: String, iterations: Int = 20_000, _ body: () -> Void) {
        let start = now()
        let cpuStart = cpuNow()
        for _ in 0..<iterations { body() }
        let cpu = (cpuNow() - cpuStart) * 1e6 / Double(iterations)
        let wall = (now() - start) * 1e6 / Double(iterations)
        print("\(label): \(formatted(cpu)) µs per call (CPU; wall \(formatted(wall)) µs)")
    }
    func formatted(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)"
    }

    let measurer = try TextMeasurer(style: TextStyle(font: "DejaVu Sans", size: 14))
    let captions = [
        (
            "latin, 100 characters",
            "Sunset over the harbour, with boats coming home after a long day at sea; fishermen unload the catch."
        ),
        (
            "chinese, 50 characters",
            "夕阳西下，港口的渔船缓缓归来。渔民们一边收网，一边谈论着今天的天气和收成。摄影师在码头上等待最好的光线。"
        ),
        (
            "cyrillic, 100 characters",
            "Закат над рекой был особенно красив: лодки медленно возвращались к берегу, а рыбаки разбирали сети."
        ),
    ]
    for (label, text) in captions {
        _ = measurer.measure(text, width: 200)  // warm the caches
        _ = measurer.measure(text, width: 200, maxLines: 3)
        report("warm \(label), width 200") { _ = measurer.measure(text, width: 200) }
        report("warm \(label), width 200, 3 lines max") { _ = measurer.measure(text, width: 200, maxLines: 3) }
    }
}

/// One line of the corpus.
struct Caption {
    var kind: String
    var size: Int
    var width: Double
    var text: String
    var characters: Int
}

/// The TextMeasure side of the comparison with Pango.
func corpus(path: String, font: String, warmPasses: Int, linesOut: String) throws {
    var captions: [Caption] = []
    for line in readFile(path).split(separator: "\n", omittingEmptySubsequences: true) {
        let fields = line.split(separator: "\t", maxSplits: 3, omittingEmptySubsequences: false)
        guard fields.count == 4, let size = Int(fields[1]), let width = Double(fields[2]) else {
            fail("bad corpus line: \(line)")
        }
        let text = String(fields[3])
        captions.append(
            Caption(kind: String(fields[0]), size: size, width: width, text: text, characters: text.unicodeScalars.count))
    }
    // One measurer per size, as Pango gets one layout per size: font loading happens here.
    var measurers: [Int: TextMeasurer] = [:]
    for size in Set(captions.map(\.size)) {
        let measurer = try TextMeasurer(style: TextStyle(font: font, size: Double(size)))
        _ = measurer.measure("x", width: 200)  // as the Pango side does to load its primary font
        measurers[size] = measurer
    }
    let measurerOfCaption = captions.map { measurers[$0.size]! }
    let ready = now()

    var lineCounts = [Int](repeating: 0, count: captions.count)
    var checksum = 0.0
    let coldStart = now()
    let coldCPUStart = cpuNow()
    for index in captions.indices {
        let result = measurerOfCaption[index].measure(captions[index].text, width: captions[index].width)
        lineCounts[index] = result.lines
        checksum += result.height
    }
    let coldCPU = cpuNow() - coldCPUStart
    let cold = now() - coldStart

    // Warm passes, timed per kind of text so that the report can show each script.
    let kinds = Array(Set(captions.map(\.kind))).sorted()
    let indicesOfKind = kinds.map { kind in captions.indices.filter { captions[$0].kind == kind } }
    var warmPassTimes: [Double] = []
    var warmPassCPUTimes: [Double] = []
    var warmKindCPUTimes = [[Double]](repeating: [], count: kinds.count)
    for _ in 0..<warmPasses {
        let passStart = now()
        var passCPU = 0.0
        for (kindIndex, indices) in indicesOfKind.enumerated() {
            let start = cpuNow()
            for index in indices {
                checksum += measurerOfCaption[index].measure(captions[index].text, width: captions[index].width).height
            }
            let elapsed = cpuNow() - start
            warmKindCPUTimes[kindIndex].append(elapsed)
            passCPU += elapsed
        }
        warmPassCPUTimes.append(passCPU)
        warmPassTimes.append(now() - passStart)
    }

    guard let output = fopen(linesOut, "w") else { fail("cannot write \(linesOut)") }
    for count in lineCounts { fputs("\(count)\n", output) }
    fclose(output)

    let kindEntries = kinds.indices.map { kindIndex in
        let characters = indicesOfKind[kindIndex].reduce(0) { $0 + captions[$1].characters }
        return "\"\(kinds[kindIndex])\": {\"captions\": \(indicesOfKind[kindIndex].count), \"characters\": \(characters), "
            + "\"warm_cpu_seconds\": \(warmKindCPUTimes[kindIndex])}"
    }
    let totalCharacters = captions.reduce(0) { $0 + $1.characters }
    print(
        "{\"ready\": \(ready), \"captions\": \(captions.count), \"characters\": \(totalCharacters), "
            + "\"cold_seconds\": \(cold), \"cold_cpu_seconds\": \(coldCPU), \"warm_seconds\": \(warmPassTimes), "
            + "\"warm_cpu_seconds\": \(warmPassCPUTimes), \"checksum\": \(checksum), "
            + "\"kinds\": {\(kindEntries.joined(separator: ", "))}}")
}

let arguments = CommandLine.arguments
do {
    switch arguments.dropFirst().first {
    case "micro":
        try micro()
    case "corpus" where arguments.count == 6:
        guard let warmPasses = Int(arguments[4]), warmPasses >= 1 else { fail("WARM_PASSES must be a positive number") }
        try corpus(path: arguments[2], font: arguments[3], warmPasses: warmPasses, linesOut: arguments[5])
    default:
        fail("usage: text-bench micro | text-bench corpus CORPUS.tsv FONT WARM_PASSES LINES_OUT")
    }
} catch {
    fail("\(error)")
}
