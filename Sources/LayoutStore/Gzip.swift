import CLibDeflate
import CZlib
import Synchronization

/// gzip: pages are compressed once, when stored, and served as they are to every client that accepts gzip;
/// nothing is compressed per request. Compressed by libdeflate, read back by zlib.
public enum Gzip {
    /// The gzip form of `bytes`. Pages use level 4: 6 % larger than level 9 on a page of JSON, in a third of its
    /// time (with pages at level 9, zlib was a quarter of the service's CPU while it took and laid out a large feed).
    /// libdeflate (Debian's 1.14) at level 4 takes two thirds of zlib's time at its level 4, and its output is a
    /// percent smaller (90 pages of a 5,020-pin layout, 7.0 MB of JSON: 32.3 ms against 50.0 ms, 1,117,447 bytes
    /// against 1,129,349, medians of 9); zlib's page compression was 15 % of the service's CPU while it laid out a
    /// new version of that feed (perf).
    public static func compress(_ bytes: [UInt8], level: Int32 = 4) -> [UInt8] {
        compressors.withCompressor(level: level) { compressor in
            let bound = libdeflate_gzip_compress_bound(compressor, bytes.count)
            return [UInt8](unsafeUninitializedCapacity: bound) { output, count in
                count = bytes.withUnsafeBytes { input in
                    libdeflate_gzip_compress(compressor, input.baseAddress, input.count, output.baseAddress, bound)
                }
                // The bound is libdeflate's promise of room for any input.
                precondition(count > 0, "libdeflate: the gzip form did not fit its bound")
            }
        }
    }

    private static let compressors = DeflateCompressors()

    /// The bytes a gzip stream holds, or `nil` when it is not one (or is larger than `limit`).
    public static func decompress(_ bytes: [UInt8], limit: Int = 1 << 30) -> [UInt8]? {
        var stream = z_stream()
        guard fl_inflate_init_gzip(&stream) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        return bytes.withUnsafeBufferPointer { input -> [UInt8]? in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            stream.avail_in = uInt(input.count)
            while true {
                let (status, produced) = chunk.withUnsafeMutableBufferPointer { out -> (Int32, Int) in
                    stream.next_out = out.baseAddress
                    stream.avail_out = uInt(out.count)
                    let status = inflate(&stream, Z_NO_FLUSH)
                    return (status, out.count - Int(stream.avail_out))
                }
                output.append(contentsOf: chunk[..<produced])
                if output.count > limit { return nil }
                if status == Z_STREAM_END { return output }
                guard status == Z_OK else { return nil }
                // No progress with input left means the stream is cut short.
                if produced == 0 && stream.avail_in == 0 { return nil }
            }
        }
    }
}

/// libdeflate's compressors, kept for reuse: each holds some hundreds of kilobytes of tables, too much to allocate
/// per page. One is used by one thread at a time; as many exist as pages were ever compressed at once.
private final class DeflateCompressors: Sendable {
    private struct Idle: @unchecked Sendable {
        // Unchecked: a compressor in the list is used by nobody; one taken out belongs to its taker.
        var byLevel: [Int32: [OpaquePointer]] = [:]
    }
    private let idle = Mutex(Idle())

    func withCompressor<Result>(level: Int32, _ body: (OpaquePointer) -> Result) -> Result {
        let taken = idle.withLock { $0.byLevel[level]?.popLast() }
        guard let compressor = taken ?? libdeflate_alloc_compressor(level) else {
            fatalError("libdeflate: no compressor for level \(level) (out of memory, or a level outside 0...12)")
        }
        defer { idle.withLock { $0.byLevel[level, default: []].append(compressor) } }
        return body(compressor)
    }
}
