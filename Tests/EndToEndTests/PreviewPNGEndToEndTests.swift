import Foundation
import Testing

/// `feedlayout preview` writes preview.png beside index.html.
@Suite struct PreviewPNGEndToEndTests {
    /// Width and height from a PNG's IHDR chunk, after checking the signature.
    static func pngSize(_ data: Data) -> (width: Int, height: Int)? {
        let bytes = [UInt8](data.prefix(24))
        guard bytes.count == 24, bytes[0..<8] == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A],
            Array(bytes[12..<16]) == Array("IHDR".utf8)
        else { return nil }
        func bigEndian(_ offset: Int) -> Int { bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) } }
        return (bigEndian(16), bigEndian(20))
    }

    @Test func previewWritesAPNGOfTheFirstPages() async throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = try await CommandRunner.run([
            "preview", CommandRunner.sampleFeed, "--out", directory.path, "--page-size", "20", "--png-max-pages", "2",
        ])
        // corrupt.jpg and the missing photo make the run exit 1, as `layout` does; the preview is still written.
        #expect(output.status == 1, "\(output.stderr)")
        #expect(output.stderr.contains("preview.png"), "\(output.stderr)")
        // The photos it could not draw are named.
        #expect(output.stderr.contains("photo not drawn: "), "\(output.stderr)")
        #expect(output.stderr.contains("corrupt.jpg"), "\(output.stderr)")
        let data = try Data(contentsOf: directory.appendingPathComponent("preview.png"))
        let size = try #require(Self.pngSize(data))
        #expect(size.width == 1024)
        #expect(size.height > 500 && size.height <= 4000)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(names == ["fonts", "index.html", "preview.png"])
    }

    @Test func heightCapAndDeviceScaleApply() async throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = try await CommandRunner.run([
            "preview", CommandRunner.sampleFeed, "--out", directory.path, "--width", "400", "--scale", "2",
            "--png-max-height", "900",
        ])
        #expect(output.status == 1, "\(output.stderr)")
        let data = try Data(contentsOf: directory.appendingPathComponent("preview.png"))
        let size = try #require(Self.pngSize(data))
        #expect(size.width == 800)
        #expect(size.height == 900)
    }

    @Test func badLimitIsRefusedByName() async throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = try await CommandRunner.run([
            "preview", CommandRunner.sampleFeed, "--out", directory.path, "--png-max-height", "0",
        ])
        #expect(output.status != 0)
        #expect(output.stderr.contains("--png-max-height"), "\(output.stderr)")
    }
}
