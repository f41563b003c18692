import Foundation
import Testing

@testable import LayoutStore

@Suite struct GzipTests {
    @Test(arguments: [0, 1, 100, 70_000, 1_000_000])
    func roundTrips(count: Int) throws {
        var generator = SystemRandomNumberGenerator()
        // Half random, half repeated: both the stored and the compressed paths of deflate.
        let bytes = (0..<count).map { $0 % 2 == 0 ? UInt8.random(in: 0...255, using: &generator) : UInt8($0 % 7) }
        let compressed = Gzip.compress(bytes)
        #expect(compressed.starts(with: [0x1F, 0x8B]), "gzip magic")
        #expect(Gzip.decompress(compressed) == bytes)
    }

    @Test func refusesWhatIsNotGzip() {
        #expect(Gzip.decompress(Array("{\"not\": \"gzip\"}".utf8)) == nil)
        let cut = Array(Gzip.compress(Array(repeating: 7, count: 10_000)).dropLast(4))
        #expect(Gzip.decompress(cut) == nil, "a stream cut short is no stream")
    }

    /// Compressors are reused across calls and threads: pages compressed at once, each by whichever compressor it
    /// got, all come back whole, at every level asked for.
    @Test func compressorsSharedAcrossTasksKeepEveryPageWhole() async throws {
        let pages = (0..<64).map { page in Array("{\"page\":\(page),\"items\":[\(String(repeating: "\"pin \(page)\",", count: 500 + page))0]}".utf8) }
        let results = await withTaskGroup(of: (Int, Bool).self) { group in
            for (index, page) in pages.enumerated() {
                group.addTask { (index, Gzip.decompress(Gzip.compress(page, level: index % 2 == 0 ? 4 : 9)) == page) }
            }
            return await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        #expect(results.count == pages.count && results.values.allSatisfy { $0 })
    }

    /// The gzip form is what gzip(1) reads (the format clients and CDNs decode), not only what zlib reads back.
    @Test func gzipReadsWhatIsCompressed() throws {
        let json = Array(String(repeating: "{\"title\":\"A photo\",\"width\":236,\"height\":157}\n", count: 2_000).utf8)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gzip-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("page.json.gz")
        try Data(Gzip.compress(json)).write(to: file)
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/bin/gzip")
        gzip.arguments = ["-dc", file.path]
        let output = Pipe()
        gzip.standardOutput = output
        try gzip.run()
        let decoded = output.fileHandleForReading.readDataToEndOfFile()
        gzip.waitUntilExit()
        #expect(gzip.terminationStatus == 0)
        #expect(Array(decoded) == json)
    }
}
