import FeedLayoutTestSupport
import Foundation
import ImageProbe
import Logging
import RemoteFetch
import Testing

/// Remote probing against a real HTTP server on 127.0.0.1 that serves the fixtures.
@Suite(.timeLimit(.minutes(5)))
struct RemoteImageProberTests {
    static let logger = Logger(label: "test.remote-probe")
    /// No test here is about a timeout, so each is an hour: a busy machine makes these tests slower, never
    /// failed (in a full parallel run on two shared cores a 56 KB fetch here once outlasted a 20 s total
    /// timeout). The suite's time limit still ends a hang.
    static let local = RemoteFetchConfiguration(
        connectTimeout: .seconds(3600), readTimeout: .seconds(3600), totalTimeout: .seconds(3600),
        allowPrivateNetwork: true)

    /// Every image fixture (not the README, the fuzz corpus or the generator).
    static func fixtureNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: Fixtures.directory).sorted().filter { name in
            !name.hasSuffix(".md") && !name.hasSuffix(".py") && name != Fixtures.fuzzCorpusName && !Fixtures.isFolder(name)
        }
    }

    /// The fields that must agree between local and remote probing (bytes read differ by design).
    static func summary(_ result: Result<ImageInfo, ImageProbeError>) -> String {
        switch result {
        case .success(let info):
            "\(info.format) \(info.width)x\(info.height) o\(info.orientation) p\(info.isProgressive) i\(info.isInterlaced) "
                + "a\(info.isAnimated) c\(info.isCMYK) d\(String(describing: info.bitDepth)) w\(info.warnings.count)"
        case .failure(let error): "error \(error.code)"
        }
    }

    /// Whether the header is known from the first `size` bytes (so one range request must do).
    static func fitsInFirstRange(_ bytes: [UInt8], size: Int = 16 * 1024) -> Bool {
        let prefix = Array(bytes.prefix(size))
        return prefix.withUnsafeBytes { raw in
            if case .needMoreBytes = ImageHeaderParser.parse(raw, isComplete: bytes.count <= size) { return false }
            return true
        }
    }

    @Test(arguments: [true, false])
    func everyFixtureProbesAsItDoesLocally(serverHonoursRange: Bool) async throws {
        let names = try Self.fixtureNames()
        #expect(names.count > 50)
        try await TestHTTPServer.with { server in
            for name in names {
                server.serve("/" + name, bytes: try Fixtures.bytes(name), honoursRange: serverHonoursRange)
            }
            try await RemoteFetcher.withFetcher(configuration: Self.local, logger: Self.logger) { fetcher in
                let prober = ImageProber(remote: RemoteImageProber(fetcher: fetcher))
                for name in names {
                    let localResult = Result { () throws(ImageProbeError) in
                        try LocalImageProber().probe(path: Fixtures.path(name))
                    }
                    let remoteResult: Result<ImageInfo, ImageProbeError>
                    do throws(ImageProbeError) {
                        remoteResult = .success(try await prober.probe(server.url("/" + name)))
                    } catch {
                        remoteResult = .failure(error)
                    }
                    #expect(Self.summary(remoteResult) == Self.summary(localResult), "\(name)")
                    if case .failure(let error) = remoteResult {
                        #expect(error.message.hasPrefix(server.url("/" + name)), "\(name): \(error.message)")
                    }
                    let bytes = try Fixtures.bytes(name)
                    if Self.fitsInFirstRange(bytes) {
                        #expect(server.requests(for: "/" + name).count == 1, "\(name): one request per image")
                    }
                    if serverHonoursRange {
                        #expect(server.requests(for: "/" + name).first?.range == "bytes=0-16383")
                    }
                }
            }
        }
    }

    @Test func aBigExifSegmentTakesASecondRangeAndNotTheWholeFile() async throws {
        // A baseline JPEG with 40 KB of APP2 before its frame header and 1 MB of padding after it.
        let jpeg = try Fixtures.bytes("jpeg-baseline.jpg")
        let payload = [UInt8](repeating: 0x41, count: 40_000)
        let segment: [UInt8] =
            [0xFF, 0xE2, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
        let big = Array(jpeg[0..<2]) + segment + Array(jpeg[2...]) + [UInt8](repeating: 0, count: 1_000_000)
        try await TestHTTPServer.with { server in
            server.serve("/big.jpg", bytes: big)
            try await RemoteFetcher.withFetcher(configuration: Self.local, logger: Self.logger) { fetcher in
                let info = try await RemoteImageProber(fetcher: fetcher).probe(url: server.url("/big.jpg"))
                let expected = try LocalImageProber().probe(path: Fixtures.path("jpeg-baseline.jpg"))
                #expect(info.width == expected.width && info.height == expected.height)
                #expect(server.requests(for: "/big.jpg").count == 2)
                #expect(info.bytesRead < 100_000)
            }
        }
    }

    @Test func verifyAndPlaceholdersWorkOnURLs() async throws {
        try await TestHTTPServer.with { server in
            let name = "jpeg-gradient-orientation-6.jpg"
            server.serve("/" + name, bytes: try Fixtures.bytes(name))
            server.serve("/huge.jpg", bytes: try Fixtures.bytes("jpeg-huge-dimensions.jpg"))
            try await RemoteFetcher.withFetcher(configuration: Self.local, logger: Self.logger) { fetcher in
                let prober = ImageProber(remote: RemoteImageProber(fetcher: fetcher))
                let report = try await prober.verifyDecodable(server.url("/" + name))
                let localReport = try LocalImageProber().verifyDecodable(path: Fixtures.path(name))
                #expect(report == localReport)
                let placeholder = try await prober.placeholder(server.url("/" + name))
                #expect(placeholder == (try LocalImageProber().placeholder(path: Fixtures.path(name))))
                let error = await #expect(throws: ImageProbeError.self) {
                    try await prober.verifyDecodable(server.url("/huge.jpg"))
                }
                #expect(error?.code == .exceedsPixelBudget)
                // The budget is checked on the header: the body is never downloaded.
                #expect(server.requests(for: "/huge.jpg").count == 1)
            }
        }
    }

    @Test func fetchFailuresBecomeProbeErrorsNamingTheURL() async throws {
        try await TestHTTPServer.with { server in
            server.serve("/a.jpg", bytes: try Fixtures.bytes("jpeg-baseline.jpg"))
            try await RemoteFetcher.withFetcher(logger: Self.logger) { fetcher in
                let prober = ImageProber(remote: RemoteImageProber(fetcher: fetcher))
                let refused = await #expect(throws: ImageProbeError.self) {
                    try await prober.probe(server.url("/a.jpg"))
                }
                #expect(refused?.code == .refused)
                #expect(refused?.message.hasPrefix(server.url("/a.jpg")) == true)
            }
            #expect(server.requests.isEmpty)
            try await RemoteFetcher.withFetcher(configuration: Self.local, logger: Self.logger) { fetcher in
                let prober = ImageProber(remote: RemoteImageProber(fetcher: fetcher))
                let missing = await #expect(throws: ImageProbeError.self) {
                    try await prober.probe(server.url("/nope.jpg"))
                }
                #expect(missing?.code == .httpStatus)
            }
            let offline = ImageProber(remote: nil)
            let error = await #expect(throws: ImageProbeError.self) { try await offline.probe(server.url("/a.jpg")) }
            #expect(error?.code == .refused)
        }
    }
}
