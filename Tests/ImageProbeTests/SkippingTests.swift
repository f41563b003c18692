import Foundation
import ImageProbe
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Megabytes of metadata before the header: seekable files skip it unread, pipes read through.
struct SkippingTests {
    /// A JPEG whose APP0 is followed by `megabytes` of XMP segments, then the fixture's Exif
    /// (orientation 6), tables and frame header.
    static func jpegBehindXMP(megabytes: Int) throws -> [UInt8] {
        let fixture = try Fixtures.bytes("jpeg-orientation-6-le.jpg")
        let app0End = 4 + (Int(fixture[4]) << 8 | Int(fixture[5]))
        let payload = Array("http://ns.adobe.com/xap/1.0/\0".utf8) + [UInt8](repeating: 0x20, count: 65_000)
        let segment = [0xFF, 0xE1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
        let segmentCount = megabytes * 1_048_576 / segment.count
        return Array(fixture[..<app0End]) + Array(repeating: segment, count: segmentCount).flatMap { $0 }
            + Array(fixture[app0End...])
    }

    /// A PNG with a 300 KiB text chunk before an eXIf chunk (orientation 8).
    static func pngBehindText() throws -> [UInt8] {
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let typeBytes = Array(type.utf8)
            var crc: UInt32 = 0xFFFF_FFFF
            for byte in typeBytes + data {
                crc ^= UInt32(byte)
                for _ in 0..<8 { crc = (crc >> 1) ^ (0xEDB8_8320 & (0 &- (crc & 1))) }
            }
            crc ^= 0xFFFF_FFFF
            let length = UInt32(data.count)
            return [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: length >> $0) } + typeBytes + data
                + [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: crc >> $0) }
        }
        let header: [UInt8] = [0, 0, 0, 9, 0, 0, 0, 7, 8, 2, 0, 0, 0]
        let exif: [UInt8] =
            Array("MM".utf8) + [0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 8, 0, 0, 0, 0, 0, 0]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header)
            + chunk("tEXt", Array("Comment\0".utf8) + [UInt8](repeating: 0x41, count: 300_000))
            + chunk("eXIf", exif) + chunk("IDAT", [0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01])
            + chunk("IEND", [])
    }

    static func temporaryFile(_ bytes: [UInt8], _ name: String) throws -> String {
        let path = NSTemporaryDirectory() + "imageprobe-\(getpid())-\(name)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func seekableFilesSkipLongSegmentsUnread() throws {
        for (name, bytes) in [
            ("xmp.jpg", try Self.jpegBehindXMP(megabytes: 3)), ("text.png", try Self.pngBehindText()),
        ] {
            let path = try Self.temporaryFile(bytes, name)
            defer { unlink(path) }
            var info = try LocalImageProber().probe(path: path)
            var expected = try #require(Fixtures.parse(bytes).info)
            #expect(info.orientation == (name.hasSuffix(".jpg") ? 6 : 8))
            #expect(info.bytesRead < 100_000, "\(name) read \(info.bytesRead) of \(bytes.count) bytes")
            (info.bytesRead, expected.bytesRead) = (0, 0)
            #expect(info == expected)
        }
    }

    /// A pipe cannot seek: everything is read, with the same answer.
    @Test func pipesReadThroughLongSegments() throws {
        let bytes = try Self.jpegBehindXMP(megabytes: 1)
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let writeEnd = ends[1]
        let writer = Thread {
            bytes.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let written = write(writeEnd, raw.baseAddress! + offset, raw.count - offset)
                    if written <= 0 { break }
                    offset += written
                }
            }
            close(writeEnd)
        }
        writer.start()
        defer { close(ends[0]) }
        var info = try LocalImageProber().probe(fileDescriptor: ends[0], source: "-")
        #expect(info.bytesRead > 1_000_000)
        var expected = try #require(Fixtures.parse(bytes).info)
        (info.bytesRead, expected.bytesRead) = (0, 0)
        #expect(info == expected)
        // Drain so the writer thread finishes before the read end closes.
        var sink = [UInt8](repeating: 0, count: 65536)
        while read(ends[0], &sink, sink.count) > 0 {}
    }

    /// A file that ends inside the skipped metadata is read, not seeked past, and is truncated.
    @Test func truncatedInsideSkippedMetadata() throws {
        let bytes = Array(try Self.jpegBehindXMP(megabytes: 2).prefix(1_500_000))
        let path = try Self.temporaryFile(bytes, "truncated.jpg")
        defer { unlink(path) }
        #expect(throws: ImageProbeError.self) { try LocalImageProber().probe(path: path) }
        do {
            _ = try LocalImageProber().probe(path: path)
        } catch {
            #expect(error.code == .truncated)
            #expect(error.message.contains("1500000"), "\(error.message)")
        }
    }
}
