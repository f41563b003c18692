import CZlib

/// gzip through zlib: pages are compressed once, when stored, and served as they are to every client that accepts
/// gzip; nothing is compressed per request.
public enum Gzip {
    /// The gzip form of `bytes`. Pages use level 4: 6 % larger than level 9 on a page of JSON, in a third of its
    /// time (with pages at level 9, zlib was a quarter of the service's CPU while it took and laid out a large feed).
    public static func compress(_ bytes: [UInt8], level: Int32 = 4) -> [UInt8] {
        var stream = z_stream()
        guard fl_deflate_init_gzip(&stream, level) == Z_OK else { fatalError("zlib: deflateInit2 failed") }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, uLong(bytes.count)))
        var output = [UInt8](repeating: 0, count: bound)
        let written = bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out -> Int in
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.avail_in = uInt(input.count)
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(out.count)
                // deflateBound promises room for the whole output, so one call finishes the stream.
                precondition(deflate(&stream, Z_FINISH) == Z_STREAM_END, "zlib: deflate did not finish within its bound")
                return out.count - Int(stream.avail_out)
            }
        }
        output.removeLast(output.count - written)
        return output
    }

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
