// In-memory header parsing, optimised (-O): nanoseconds per JPEG header over a corpus held in memory.
// Compiled together with ImageProbe's pure-Swift parser sources by Benchmarks/peers/probe.
// Usage: bench IMAGE_FILE... (JPEG files; the first 64 KiB of each is kept in memory)
#if canImport(Glibc)
    import Glibc
#endif

func readPrefix(_ path: String, limit: Int = 64 * 1024) -> [UInt8]? {
    guard let file = fopen(path, "rb") else { return nil }
    defer { fclose(file) }
    var bytes = [UInt8](repeating: 0, count: limit)
    let count = fread(&bytes, 1, limit, file)
    return Array(bytes[0..<count])
}

func now() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

// Each input is cut to the bytes the parser examines (what a reader must hold anyway), so the corpus
// measures parsing rather than cache misses over megabytes of pixel data never looked at.
let inputs: [[UInt8]] = CommandLine.arguments.dropFirst().compactMap { path in
    guard let prefix = readPrefix(path) else { return nil }
    let needed = prefix.withUnsafeBytes { raw -> Int in
        if case .info(let info) = ImageHeaderParser.parse(raw, isComplete: false) { return info.bytesRead }
        return raw.count
    }
    return Array(prefix.prefix(max(needed, 16)))
}
guard !inputs.isEmpty else {
    print("usage: bench JPEG_FILE...")
    exit(2)
}
var checksum = 0
var samples: [Double] = []
for round in 0..<15 {
    let start = now()
    var parsed = 0
    while parsed < 200_000 {
        for input in inputs {
            input.withUnsafeBytes { raw in
                if case .info(let info) = ImageHeaderParser.parse(raw, isComplete: false) {
                    checksum &+= info.width &+ info.height &+ info.orientation
                }
            }
        }
        parsed += inputs.count
    }
    let elapsed = Double(now() - start) / Double(parsed)
    if round >= 3 { samples.append(elapsed) }  // the first rounds warm caches and branch predictors
}
samples.sort()
let median = samples[samples.count / 2]
func oneDecimal(_ value: Double) -> String { "\((value * 10).rounded() / 10)" }
print("parse_ns_median \(oneDecimal(median))")
print("parse_ns_min \(oneDecimal(samples.first!))")
print("files \(inputs.count)")
print("checksum \(checksum)")
