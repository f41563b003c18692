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
}
