import ImageProbe
import Testing

#if canImport(Glibc)
    import Glibc
#endif

struct LocalImageProberTests {
    @Test func probesAFileWithOneRead() throws {
        let info = try LocalImageProber().probe(path: Fixtures.path("jpeg-orientation-6-le.jpg"))
        #expect(info.width == 6 && info.height == 4 && info.orientation == 6)
        #expect(info.displayWidth == 4 && info.displayHeight == 6)
        // The file is smaller than the first read, so all of it was read at once.
        #expect(info.bytesRead == (try Fixtures.bytes("jpeg-orientation-6-le.jpg")).count)
    }

    /// A first read far too small for the header forces several reads; the answer must not change.
    @Test(arguments: try Fixtures.allNames())
    func smallReadsGiveTheSameAnswerAsTheParser(name: String) throws {
        let prober = LocalImageProber(firstReadSize: 16, maximumHeaderSize: 1 << 20)
        let bytes = try Fixtures.bytes(name)
        let whole = Fixtures.parse(bytes)
        let probed = Result { () throws(ImageProbeError) in try prober.probe(path: Fixtures.path(name)) }
        switch probed {
        case .success(var info):
            #expect(info.bytesRead >= min(16, bytes.count) && info.bytesRead <= bytes.count)
            var expected = try #require(whole.info, "\(name)")
            // Post-IDAT PNG warnings depend on which bytes happen to be in memory.
            if name == "png-exif-after-idat.png" { info.warnings = expected.warnings }
            expected.bytesRead = info.bytesRead
            #expect(info == expected)
        case .failure(let error):
            let expected = try #require(whole.error, "\(name): \(error)")
            #expect(error.code == expected.code)
            #expect(error.source == Fixtures.path(name))
            #expect(error.message.hasPrefix(Fixtures.path(name) + ": "))
        }
    }

    @Test func missingFileIsNotFound() {
        #expect(throws: ImageProbeError.self) {
            try LocalImageProber().probe(path: Fixtures.path("no-such-file.jpg"))
        }
        do {
            _ = try LocalImageProber().probe(path: Fixtures.path("no-such-file.jpg"))
        } catch {
            #expect(error.code == .notFound)
            #expect(error.message.contains("no-such-file.jpg"))
        }
    }

    @Test func directoryIsUnreadable() {
        do {
            _ = try LocalImageProber().probe(path: Fixtures.directory)
            Issue.record("a directory was probed as an image")
        } catch {
            #expect(error.code == .unreadable)
            #expect(error.message.contains("directory"))
        }
    }

    @Test func headerLimitStopsRunawayRequests() {
        // The thumbnail fixture needs its whole Exif segment (several KiB) before the frame header.
        let prober = LocalImageProber(firstReadSize: 16, maximumHeaderSize: 64)
        do {
            _ = try prober.probe(path: Fixtures.path("jpeg-thumbnail-sof-in-exif.jpg"))
            Issue.record("the header limit was ignored")
        } catch {
            #expect(error.code == .invalidHeader)
            #expect(error.message.contains("64 bytes"))
        }
    }
}

/// Pipes deliver short reads and cannot seek: the path standard input (`-`) takes.
struct PipeProbeTests {
    @Test(arguments: ["jpeg-thumbnail-sof-in-exif.jpg", "png-apng.png", "webp-exif.webp", "gif-animated.gif"])
    func probesFromAPipe(name: String) throws {
        let bytes = try Fixtures.bytes(name)
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        // Every fixture is smaller than a pipe's 64 KiB buffer, so writing first cannot block.
        try #require(bytes.count < 65536)
        let written = bytes.withUnsafeBytes { write(ends[1], $0.baseAddress!, $0.count) }
        close(ends[1])
        defer { close(ends[0]) }
        try #require(written == bytes.count)
        let prober = LocalImageProber(firstReadSize: 64, maximumHeaderSize: 1 << 20)
        var info = try prober.probe(fileDescriptor: ends[0], source: "-")
        var expected = try #require(Fixtures.parse(bytes).info)
        #expect(info.bytesRead <= bytes.count)
        (info.bytesRead, expected.bytesRead) = (0, 0)
        #expect(info == expected)
    }

    @Test func errorsNameTheSource() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        close(ends[1])
        defer { close(ends[0]) }
        do {
            _ = try LocalImageProber().probe(fileDescriptor: ends[0], source: "-")
            Issue.record("an empty pipe was probed as an image")
        } catch {
            #expect(error.code == .truncated)
            #expect(error.source == "-")
            #expect(error.message.hasPrefix("-: "))
        }
    }
}
