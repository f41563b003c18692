import FeedLayoutTestSupport
import Foundation
import Logging
import NIOCore
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@testable import RemoteFetch

/// Fetches against a real HTTP server on 127.0.0.1 (FeedLayoutTestSupport's `TestHTTPServer`).
@Suite(.timeLimit(.minutes(5)))
struct RemoteFetcherTests {
    let logger = Logger(label: "test.remote-fetch")
    // No timeout fires in a test that is not about timeouts (those set their own, short ones): the suites run in
    // parallel with CPU-bound ones on two cores, and a loopback answer waited 10 s for a thread in a full run on a
    // busy machine. The suite's time limit ends a real hang.
    let local = RemoteFetchConfiguration(
        connectTimeout: .seconds(3600), readTimeout: .seconds(3600), totalTimeout: .seconds(3600),
        allowPrivateNetwork: true)
    /// For tests that wait for the server's events: no timeout can fire before the suite's time limit,
    /// which is what ends such a test if the awaited event never comes.
    let patient = RemoteFetchConfiguration(
        connectTimeout: .seconds(3600), readTimeout: .seconds(3600), totalTimeout: .seconds(3600),
        allowPrivateNetwork: true)

    static func bytes(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) } }

    /// Finishes once `count` bytes are held, returning them.
    static func want(_ count: Int) -> (UnsafeRawBufferPointer, Bool) -> PrefixStep<[UInt8]> {
        { bytes, complete in
            bytes.count >= count || complete ? .finished(Array(bytes.prefix(count))) : .needMoreBytes(atLeast: count)
        }
    }

    @Test func aShortPrefixTakesOneRangeRequest() async throws {
        try await TestHTTPServer.with { server in
            let body = Self.bytes(100_000)
            server.serve("/a.bin", bytes: body)
            let outcome = try await RemoteFetcher.withFetcher(configuration: local, logger: logger) { fetcher in
                try await fetcher.fetchPrefix(server.url("/a.bin"), firstRangeSize: 4096, examine: Self.want(100))
            }
            guard case .fetched(let prefix, let resource) = outcome else { Issue.record("not fetched"); return }
            #expect(prefix == Array(body.prefix(100)))
            #expect(resource.requestCount == 1)
            #expect(resource.honouredRange)
            #expect(resource.totalSize == 100_000)
            #expect(server.requests(for: "/a.bin").map(\.range) == ["bytes=0-4095"])
        }
    }

    @Test func aLongerHeaderTakesFurtherRanges() async throws {
        try await TestHTTPServer.with { server in
            let body = Self.bytes(100_000)
            server.serve("/b.bin", bytes: body)
            let outcome = try await RemoteFetcher.withFetcher(configuration: local, logger: logger) { fetcher in
                try await fetcher.fetchPrefix(server.url("/b.bin"), firstRangeSize: 4096, examine: Self.want(20_000))
            }
            guard case .fetched(let prefix, let resource) = outcome else { Issue.record("not fetched"); return }
            #expect(prefix == Array(body.prefix(20_000)))
            #expect(resource.requestCount == 2)
            #expect(server.requests(for: "/b.bin").map(\.range) == ["bytes=0-4095", "bytes=4096-24095"])
        }
    }

    @Test func aShortResourceIsComplete() async throws {
        try await TestHTTPServer.with { server in
            server.serve("/short.bin", bytes: Self.bytes(50))
            let outcome = try await RemoteFetcher.withFetcher(configuration: local, logger: logger) { fetcher in
                try await fetcher.fetchPrefix(server.url("/short.bin"), firstRangeSize: 4096) { bytes, complete in
                    complete ? .finished(bytes.count) : .needMoreBytes(atLeast: 1000)
                }
            }
            guard case .fetched(let count, let resource) = outcome else { Issue.record("not fetched"); return }
            #expect(count == 50)
            #expect(resource.requestCount == 1)
        }
    }

    @Test func aServerIgnoringRangeIsCutOffOnceEnoughIsRead() async throws {
        try await TestHTTPServer.with { server in
            let body = Self.bytes(8 * 1024 * 1024)
            server.serve("/huge.bin", .init(body: body, honoursRange: false, chunkDelay: .milliseconds(2)))
            let outcome = try await RemoteFetcher.withFetcher(configuration: local, logger: logger) { fetcher in
                try await fetcher.fetchPrefix(server.url("/huge.bin"), firstRangeSize: 4096, examine: Self.want(10_000))
            }
            guard case .fetched(let prefix, let resource) = outcome else { Issue.record("not fetched"); return }
            #expect(prefix == Array(body.prefix(10_000)))
            #expect(!resource.honouredRange)
            #expect(resource.requestCount == 1)
            #expect(resource.bytesReceived < 1024 * 1024)
            // The connection must really be cut: the server sees it close before it has sent the whole body.
            // Waiting for the close (not for the byte count to settle) keeps a loaded machine from making this
            // flaky: a client that only stopped reading would also stop the count, once the socket buffers are
            // full (about 4.3 MB on loopback), but would leave the connection open. The wait has no bound of its
            // own; the suite's time limit ends a real hang. (The hangs seen in full runs were a child process of
            // another test holding a copy of the socket: see `ChildProcess.closeInheritedDescriptors`.)
            await server.waitForAClosedConnection()
            #expect(server.closedConnections == 1)
            let sent = server.totalBytesSent
            #expect(sent < body.count, "the server sent \(sent) of \(body.count) bytes")
        }
    }

    @Test func redirectsAreFollowedUpToTheLimit() async throws {
        try await TestHTTPServer.with { server in
            server.serve("/final.bin", bytes: Self.bytes(1000))
            server.serve("/r1", .init(redirect: "/final.bin"))
            server.serve("/r2", .init(redirect: server.url("/r1")))
            server.serve("/loop", .init(redirect: "/loop"))
            try await RemoteFetcher.withFetcher(configuration: local, logger: logger) { fetcher in
                let outcome = try await fetcher.fetchPrefix(server.url("/r2"), examine: Self.want(10))
                guard case .fetched(_, let resource) = outcome else { Issue.record("not fetched"); return }
                #expect(resource.finalURL == server.url("/final.bin"))
                #expect(resource.requestCount == 3)
                let error = await #expect(throws: RemoteFetchError.self) {
                    try await fetcher.fetchPrefix(server.url("/loop"), examine: Self.want(10))
                }
                #expect(error?.code == .tooManyRedirects)
                #expect(error?.message.contains("/loop") == true)
                #expect(server.requests(for: "/loop").count == local.maximumRedirects + 1)
            }
        }
    }

    @Test func errorStatusesNameTheURL() async throws {
        try await TestHTTPServer.with { server in
            server.serve("/gone", .init(status: 410))
            try await RemoteFetcher.withFetcher(configuration: local, logger: logger) { fetcher in
                for path in ["/gone", "/missing"] {
                    let error = await #expect(throws: RemoteFetchError.self) {
                        try await fetcher.fetchPrefix(server.url(path), examine: Self.want(10))
                    }
                    #expect(error?.code == .httpStatus)
                    #expect(error?.status == (path == "/gone" ? 410 : 404))
                    #expect(error?.message.hasPrefix(server.url(path)) == true)
                }
            }
        }
    }

    /// A prefix or a whole feed (`fetchConditionally`, whose body a delegate collects): the head's timeouts are the same.
    @Test(arguments: [false, true]) func aSlowServerTimesOut(whole: Bool) async throws {
        try await TestHTTPServer.with { server in
            // The server holds its answer until the fetch has failed, and the total timeout is an hour: only the
            // connect and read timeouts (300 ms each; the head may take both) can end the request.
            let gate = ResponseGate(holdingAt: .beforeHead)
            server.serve("/slow", .init(body: Self.bytes(100), gate: gate))
            var configuration = patient
            configuration.connectTimeout = .milliseconds(300)
            configuration.readTimeout = .milliseconds(300)
            try await RemoteFetcher.withFetcher(configuration: configuration, logger: logger) { fetcher in
                let error = await #expect(throws: RemoteFetchError.self) {
                    if whole {
                        _ = try await fetcher.fetchConditionally(server.url("/slow"), validator: nil)
                    } else {
                        _ = try await fetcher.fetchPrefix(server.url("/slow"), examine: Self.want(10))
                    }
                }
                #expect(error?.code == .timeout)
                #expect(
                    error?.message.contains("the server did not answer within 0.6 seconds") == true,
                    "\(String(describing: error))")
            }
            // The request did reach the server, which was still holding its answer.
            #expect(await gate.waitUntilHeld() == 0)
            #expect(server.totalBytesSent == 0)
            gate.open()
        }
    }

    @Test func theTotalTimeoutCoversASlowBody() async throws {
        try await TestHTTPServer.with { server in
            server.serve(
                "/trickle",
                .init(body: Self.bytes(10_000), honoursRange: false, chunkDelay: .milliseconds(200), chunkSize: 10))
            var configuration = local
            configuration.totalTimeout = .milliseconds(500)
            try await RemoteFetcher.withFetcher(configuration: configuration, logger: logger) { fetcher in
                let error = await #expect(throws: RemoteFetchError.self) {
                    try await fetcher.fetchPrefix(server.url("/trickle"), examine: Self.want(5000))
                }
                #expect(error?.code == .timeout)
            }
        }
    }

    @Test func theByteCapStopsHugeBodies() async throws {
        try await TestHTTPServer.with { server in
            // The server sends at most a little more than the cap and holds the rest until the fetch has failed:
            // the cap must stop the body while it is still coming (a fetcher without one would wait until the
            // suite's time limit). "/big-unsized" has no Content-Length, so the stream's own count is what
            // stops it, not the header check. Whether the server reaches its gate is a race it need not win:
            // the client may close the connection once it holds more than the cap.
            let cap = 1024 * 1024
            let body = Self.bytes(3 * cap)
            let gatedBytes = cap + 64 * 1024
            let prefixGate = ResponseGate(holdingAt: .afterBodyBytes(gatedBytes))
            let streamGate = ResponseGate(holdingAt: .afterBodyBytes(gatedBytes))
            server.serve("/big", .init(body: body, honoursRange: false, gate: prefixGate))
            server.serve(
                "/big-unsized", .init(body: body, honoursRange: false, sendsContentLength: false, gate: streamGate))
            server.serve("/big-sized", .init(body: body, honoursRange: false))
            var configuration = patient
            configuration.maximumBytes = cap
            try await RemoteFetcher.withFetcher(configuration: configuration, logger: logger) { fetcher in
                let prefixError = await #expect(throws: RemoteFetchError.self) {
                    try await fetcher.fetchPrefix(server.url("/big"), examine: Self.want(2 * cap))
                }
                #expect(prefixError?.code == .tooLarge)
                let sentBeforeTheStream = server.totalBytesSent
                #expect(sentBeforeTheStream <= gatedBytes)

                let streamError = await #expect(throws: RemoteFetchError.self) {
                    let (stream, _) = try await fetcher.streamBody(server.url("/big-unsized"))
                    for try await _ in stream {}
                }
                #expect(streamError?.code == .tooLarge)
                #expect(server.totalBytesSent - sentBeforeTheStream <= gatedBytes)

                // With a Content-Length over the cap, the body is refused before it is read.
                let sizedError = await #expect(throws: RemoteFetchError.self) {
                    _ = try await fetcher.streamBody(server.url("/big-sized"))
                }
                #expect(sizedError?.code == .tooLarge)
            }
            prefixGate.open()
            streamGate.open()
        }
    }

    @Test func aBodyStreamsInChunks() async throws {
        try await TestHTTPServer.with { server in
            // The server sends its first 16 KiB chunk and holds the rest until the test has that chunk in hand:
            // the stream must hand bytes over before the body is complete.
            let body = Self.bytes(200_000)
            let gate = ResponseGate(holdingAt: .afterBodyBytes(1))
            server.serve("/feed.xml", .init(body: body, chunkSize: 16 * 1024, gate: gate))
            try await RemoteFetcher.withFetcher(configuration: patient, logger: logger) { fetcher in
                let (stream, resource) = try await fetcher.streamBody(server.url("/feed.xml"))
                var chunks = stream.makeAsyncIterator()
                let first = try #require(try await chunks.next())
                #expect(await gate.waitUntilHeld() == 16 * 1024)
                #expect(!first.isEmpty && first.count <= 16 * 1024)
                gate.open()
                var received = first
                var count = 1
                while let chunk = try await chunks.next() {
                    received += chunk
                    count += 1
                }
                #expect(received == body)
                #expect(count > 1)
                #expect(resource.totalSize == 200_000)
            }
        }
    }

    @Test func aFeedsOwnByteCapReplacesTheConfiguredOne() async throws {
        try await TestHTTPServer.with { server in
            server.serve("/feed.xml", .init(body: Self.bytes(300_000), honoursRange: false, chunkSize: 4096))
            var configuration = local
            configuration.maximumBytes = 100_000
            try await RemoteFetcher.withFetcher(configuration: configuration, logger: logger) { fetcher in
                // Larger than the image cap: a feed's own limit lets it through.
                let (stream, _) = try await fetcher.streamBody(server.url("/feed.xml"), maximumBytes: 1 << 20)
                var count = 0
                for try await chunk in stream { count += chunk.count }
                #expect(count == 300_000)
                // Smaller: refused from the Content-Length before any body byte is read.
                let error = await #expect(throws: RemoteFetchError.self) {
                    _ = try await fetcher.streamBody(server.url("/feed.xml"), maximumBytes: 200_000)
                }
                #expect(error?.code == .tooLarge)
                #expect(error?.message.contains(server.url("/feed.xml")) == true)
                #expect(error?.message.contains("200000 bytes") == true)
            }
        }
    }

    @Test func aStreamedBodyReportsItsFinalURLAndContentType() async throws {
        try await TestHTTPServer.with { server in
            server.serve(
                "/feeds/a.xml",
                .init(body: Self.bytes(10), contentType: "application/rss+xml; charset=\"Windows-1252\""))
            server.serve("/a", .init(redirect: server.url("/feeds/a.xml")))
            try await RemoteFetcher.withFetcher(configuration: local, logger: logger) { fetcher in
                let (_, resource) = try await fetcher.streamBody(server.url("/a"))
                #expect(resource.finalURL == server.url("/feeds/a.xml"))
                #expect(resource.contentType == "application/rss+xml; charset=\"Windows-1252\"")
                #expect(resource.charset == "windows-1252")
            }
        }
    }

    @Test(
        arguments: [
            ("text/xml; charset=UTF-8", "utf-8"), ("text/xml;charset='iso-8859-1'", "iso-8859-1"),
            ("text/xml", nil), ("text/xml; format=flowed; Charset = koi8-r ", "koi8-r"), ("text/xml; charset=", nil),
        ] as [(String, String?)])
    func theCharsetComesFromTheContentType(header: String, charset: String?) {
        var resource = RemoteResource(
            url: "u", finalURL: "u", requestCount: 1, bytesReceived: 0, honouredRange: false)
        resource.contentType = header
        #expect(resource.charset == charset)
    }

    @Test func aStreamedBodyTimesOutNamingTheURL() async throws {
        try await TestHTTPServer.with { server in
            // As in aSlowServerTimesOut: the answer is held until the fetch has failed.
            let gate = ResponseGate(holdingAt: .beforeHead)
            server.serve("/slow.xml", .init(body: Self.bytes(100), gate: gate))
            var configuration = patient
            configuration.connectTimeout = .milliseconds(300)
            configuration.readTimeout = .milliseconds(300)
            try await RemoteFetcher.withFetcher(configuration: configuration, logger: logger) { fetcher in
                let error = await #expect(throws: RemoteFetchError.self) {
                    _ = try await fetcher.streamBody(server.url("/slow.xml"))
                }
                #expect(error?.code == .timeout)
                #expect(error?.message.hasPrefix(server.url("/slow.xml")) == true)
            }
            gate.open()
        }
    }

    /// A feed's body is bounded by the read timeout between bytes, not by the total timeout: a large feed that
    /// arrives steadily is read to its end, and one whose server goes silent still fails.
    @Test func aSteadyBodyOutlivesTheTotalTimeoutWhenOnlyTheHeadIsBounded() async throws {
        try await TestHTTPServer.with { server in
            let body = Self.bytes(20 * 512)
            // 20 chunks 150 ms apart: 3 s in all, against a total timeout of 1 s (the read timeout between bytes
            // is long: the suites share two cores, and a loaded machine may delay a chunk by seconds).
            server.serve("/steady.xml", .init(body: body, chunkDelay: .milliseconds(150), chunkSize: 512))
            var configuration = patient
            configuration.readTimeout = .seconds(20)
            configuration.totalTimeout = .seconds(1)
            try await RemoteFetcher.withFetcher(configuration: configuration, logger: logger) { fetcher in
                let (stream, _) = try await fetcher.streamBody(server.url("/steady.xml"), boundedInTotal: false)
                var received: [UInt8] = []
                for try await chunk in stream { received += chunk }
                #expect(received == body)
                // Bounded in total (a photo), the same body is cut off.
                let (bounded, _) = try await fetcher.streamBody(server.url("/steady.xml"))
                await #expect(throws: RemoteFetchError.self) {
                    for try await _ in bounded {}
                }
            }
        }
    }

    /// The read timeout bounds only the waits for the server: a caller that takes longer than it between chunks
    /// (a feed whose photos are being probed; a whole body's `admit`, an upload budget waiting for room) still
    /// reads the whole body, though the client stops reading meanwhile.
    @Test(arguments: [BodyReading.streamed, .collected])
    func aCallerSlowerThanTheReadTimeoutStillReadsTheWholeBody(reading: BodyReading) async throws {
        try await TestHTTPServer.with { server in
            let body = Self.bytes(4 * 512)
            server.serve("/paced.xml", .init(body: body, chunkDelay: .milliseconds(20), chunkSize: 512))
            var configuration = patient
            configuration.readTimeout = .seconds(1)
            try await RemoteFetcher.withFetcher(configuration: configuration, logger: logger) { fetcher in
                let (stream, _) = try await fetcher.streamBody(server.url("/paced.xml"), boundedInTotal: false)
                let received = try await reading.read(stream) { try await Task.sleep(for: .milliseconds(1500)) }
                #expect(received == body)
            }
        }
    }

    @Test(arguments: [BodyReading.streamed, .collected])
    func aBodyWhoseServerFallsSilentFailsAfterTheReadTimeout(reading: BodyReading) async throws {
        try await TestHTTPServer.with { server in
            // The rest of the body is held until the fetch has failed, and the other timeouts are an hour: only the
            // read timeout can end the loop (not timed: the suites share two cores, and a busy pool delays any timer).
            let gate = ResponseGate(holdingAt: .afterBodyBytes(1024))
            server.serve("/stalls.xml", .init(body: Self.bytes(4096), chunkSize: 512, gate: gate))
            var configuration = patient
            configuration.readTimeout = .milliseconds(500)
            try await RemoteFetcher.withFetcher(configuration: configuration, logger: logger) { fetcher in
                let (stream, _) = try await fetcher.streamBody(server.url("/stalls.xml"), boundedInTotal: false)
                let error = await #expect(throws: RemoteFetchError.self) {
                    _ = try await reading.read(stream) {}
                }
                #expect(error?.code == .timeout)
                #expect(error?.message.contains("the server sent nothing for 0.5 seconds") == true, "\(String(describing: error))")
            }
            gate.open()
        }
    }

    // MARK: Whole bodies (`RemoteBody.collected`)

    /// A body collected whole is the server's bytes, with or without a Content-Length, over a reservation larger
    /// than the huge-page threshold; `admit` sees the growing count, chunk by chunk, up to the whole.
    @Test func aCollectedBodyIsTheServersBytes() async throws {
        try await TestHTTPServer.with { server in
            let body = Self.bytes(3 * 1024 * 1024 + 17)
            server.serve("/sized.xml", .init(body: body, chunkSize: 64 * 1024))
            server.serve("/unsized.xml", .init(body: body, chunkSize: 64 * 1024, sendsContentLength: false))
            try await RemoteFetcher.withFetcher(configuration: local, logger: logger) { fetcher in
                for (path, capacity) in [("/sized.xml", body.count), ("/unsized.xml", 0), ("/sized.xml", 32 << 20)] {
                    let (stream, _) = try await fetcher.streamBody(server.url(path), boundedInTotal: false)
                    let admitted = AdmittedCounts()
                    let collected = try await stream.collected(capacity: capacity) { admitted.add($0) }
                    #expect(collected == body, "\(path), reserving \(capacity)")
                    let counts = admitted.counts
                    #expect(counts.count > 1 && counts == counts.sorted() && counts.last == body.count)
                }
                let conditional = try await fetcher.fetchConditionally(server.url("/unsized.xml"), validator: nil)
                #expect(conditional.body == body && conditional.resource.bytesReceived == body.count)
            }
        }
    }

    /// "/big-unsized": three times `cap` without a Content-Length, what is past the cap (and a chunk) held until the
    /// gate opens, once the fetch has failed.
    static func serveUnsizedPastTheCap(_ server: TestHTTPServer, cap: Int) -> ResponseGate {
        let gate = ResponseGate(holdingAt: .afterBodyBytes(cap + 64 * 1024))
        server.serve(
            "/big-unsized", .init(body: bytes(3 * cap), honoursRange: false, sendsContentLength: false, gate: gate))
        return gate
    }

    @Test func aCollectedBodyStopsAtTheByteCapAndAtWhatAdmitRefuses() async throws {
        try await TestHTTPServer.with { server in
            // As in theByteCapStopsHugeBodies: the server holds what is past the cap until the fetch has failed.
            let cap = 1024 * 1024
            let gate = Self.serveUnsizedPastTheCap(server, cap: cap)
            server.serve("/small", .init(body: Self.bytes(200_000), chunkSize: 16 * 1024))
            try await RemoteFetcher.withFetcher(configuration: local, logger: logger) { fetcher in
                let (stream, _) = try await fetcher.streamBody(server.url("/big-unsized"), maximumBytes: cap)
                let error = await #expect(throws: RemoteFetchError.self) {
                    _ = try await stream.collected(capacity: 0)
                }
                #expect(error?.code == .tooLarge)
                #expect(error?.message.hasPrefix(server.url("/big-unsized")) == true)
                // What `admit` throws ends the collection as it is.
                struct OverBudget: Error {}
                let (small, _) = try await fetcher.streamBody(server.url("/small"))
                await #expect(throws: OverBudget.self) {
                    _ = try await small.collected(capacity: 0) { if $0 > 50_000 { throw OverBudget() } }
                }
            }
            gate.open()
        }
    }

    /// A connection the server resets in the middle of a body ends a collection with the fetch error that names the
    /// URL, as it ends a streamed read: never with the connection's own error type.
    @Test(arguments: [BodyReading.streamed, .collected])
    func aBodyCutByTheServerIsAFetchError(reading: BodyReading) async throws {
        let server = try ResettingServer(declaring: 1_000_000, sending: 100_000)
        try await RemoteFetcher.withFetcher(configuration: local, logger: logger) { fetcher in
            let url = "http://127.0.0.1:\(server.port)/cut.xml"
            let (stream, _) = try await fetcher.streamBody(url, boundedInTotal: false)
            let error = await #expect(throws: RemoteFetchError.self) {
                _ = try await reading.read(stream) {}
            }
            #expect(error?.message.hasPrefix(url) == true, "\(String(describing: error))")
        }
    }

    // MARK: Whole feeds (`fetchConditionally`, collected on the connection's event loop)

    /// A feed fetched whole is the server's bytes, with or without a Content-Length and through a redirect; the
    /// chunks hook sees exactly those bytes, in order, and nothing of the redirect's own body; a `304` keeps none.
    @Test func aConditionalFetchCollectsTheServersBytesAndHandsOverItsChunks() async throws {
        try await TestHTTPServer.with { server in
            let body = Self.bytes(3 * 1024 * 1024 + 17)
            server.serve("/sized.xml", .init(body: body, entityTag: "\"v1\"", chunkSize: 64 * 1024))
            server.serve("/unsized.xml", .init(body: body, chunkSize: 64 * 1024, sendsContentLength: false))
            server.serve("/moved.xml", .init(redirect: "/sized.xml"))
            try await RemoteFetcher.withFetcher(configuration: local, logger: logger) { fetcher in
                for path in ["/sized.xml", "/unsized.xml", "/moved.xml"] {
                    let handed = Mutex<[UInt8]>([])
                    let fetched = try await fetcher.fetchConditionally(server.url(path), validator: nil) { chunk in
                        handed.withLock { $0 += chunk.readableBytesView }
                    }
                    #expect(fetched.status == 200 && fetched.body == body, "\(path)")
                    #expect(fetched.resource.bytesReceived == body.count)
                    #expect(handed.withLock { $0 } == body, "\(path)")
                    #expect(fetched.resource.finalURL == server.url(path == "/moved.xml" ? "/sized.xml" : path))
                }
                let handed = Mutex(0)
                let unchanged = try await fetcher.fetchConditionally(
                    server.url("/sized.xml"), validator: RemoteValidator(entityTag: "\"v1\"", lastModified: nil)
                ) { chunk in handed.withLock { $0 += chunk.readableBytes } }
                #expect(unchanged.status == 304 && unchanged.body.isEmpty && handed.withLock { $0 } == 0)
            }
        }
    }

    /// A body read into kept memory is the server's bytes in that memory (no new memory); kept memory that something
    /// else still holds, or that is too small, is left alone and new memory is taken.
    @Test func aConditionalFetchReusesTheMemoryOfTheLastBodyOnceItIsFree() async throws {
        try await TestHTTPServer.with { server in
            let body = Self.bytes(2 * 1024 * 1024 + 5)
            let other = Self.bytes(1024 * 1024)
            server.serve("/feed.xml", .init(body: body, chunkSize: 64 * 1024))
            server.serve("/other.xml", .init(body: other, chunkSize: 64 * 1024))
            let memory = BodyMemory()
            func base(_ bytes: [UInt8]) -> UnsafePointer<UInt8>? { bytes.withUnsafeBufferPointer { $0.baseAddress } }
            try await RemoteFetcher.withFetcher(configuration: local, logger: logger) { fetcher in
                let first = try await fetcher.fetchConditionally(server.url("/feed.xml"), validator: nil, memory: memory)
                #expect(first.body == body)
                let firstBase = base(first.body)
                memory.keep(first.body)
                // Still held (here by `first`, as a layout would hold it): new memory, the held body unchanged, and
                // the memory no longer kept (its holder has it).
                let second = try await fetcher.fetchConditionally(server.url("/other.xml"), validator: nil, memory: memory)
                #expect(second.body == other && base(second.body) != firstBase && first.body == body)
                #expect(memory.keptCapacity == 0)
                memory.keep(second.body)
                memory.keep([])
                #expect(memory.keptCapacity >= other.count, "the larger memory stays kept")
            }
            // Once nothing else holds it, the next body is read into it.
            let reuse = try await RemoteFetcher.withFetcher(configuration: local, logger: logger) { fetcher in
                let kept = BodyMemory()
                var held = try await fetcher.fetchConditionally(server.url("/feed.xml"), validator: nil).body
                let heldBase = base(held)
                kept.keep(held)
                held = []
                let again = try await fetcher.fetchConditionally(server.url("/other.xml"), validator: nil, memory: kept)
                return (again.body == other, base(again.body) == heldBase, kept.keptCapacity)
            }
            #expect(reuse.0 && reuse.1, "read into the kept memory")
            #expect(reuse.2 == 0, "taken, not kept twice")
        }
    }

    /// The byte cap stops a feed announced too large before its body, and one without a Content-Length once it
    /// passes the cap; a server silent for the read timeout in the middle of the body, or one that resets the
    /// connection there, ends the fetch with an error that names the URL.
    @Test func aConditionalFetchStopsAtItsCapAtSilenceAndAtAReset() async throws {
        try await TestHTTPServer.with { server in
            let cap = 1024 * 1024
            let gate = Self.serveUnsizedPastTheCap(server, cap: cap)
            server.serve("/big-sized", .init(body: Self.bytes(3 * cap)))
            let silence = ResponseGate(holdingAt: .afterBodyBytes(1024))
            server.serve("/stalls.xml", .init(body: Self.bytes(4096), chunkSize: 512, gate: silence))
            var configuration = patient
            configuration.readTimeout = .milliseconds(500)
            try await RemoteFetcher.withFetcher(configuration: configuration, logger: logger) { fetcher in
                for path in ["/big-unsized", "/big-sized"] {
                    let error = await #expect(throws: RemoteFetchError.self) {
                        try await fetcher.fetchConditionally(server.url(path), validator: nil, maximumBytes: cap)
                    }
                    #expect(error?.code == .tooLarge, "\(path)")
                    #expect(error?.message.hasPrefix(server.url(path)) == true)
                }
                let error = await #expect(throws: RemoteFetchError.self) {
                    try await fetcher.fetchConditionally(server.url("/stalls.xml"), validator: nil)
                }
                #expect(error?.code == .timeout)
                #expect(error?.message.contains("the server sent nothing for 0.5 seconds") == true, "\(String(describing: error))")
            }
            gate.open()
            silence.open()
        }
        let resetting = try ResettingServer(declaring: 1_000_000, sending: 100_000)
        try await RemoteFetcher.withFetcher(configuration: local, logger: logger) { fetcher in
            let url = "http://127.0.0.1:\(resetting.port)/cut.xml"
            let error = await #expect(throws: RemoteFetchError.self) {
                try await fetcher.fetchConditionally(url, validator: nil)
            }
            #expect(error?.message.hasPrefix(url) == true, "\(String(describing: error))")
        }
    }

    @Test func aConditionalRequestSeesNotModified() async throws {
        try await TestHTTPServer.with { server in
            server.serve("/tagged", .init(body: Self.bytes(1000), entityTag: "\"v1\""))
            try await RemoteFetcher.withFetcher(configuration: local, logger: logger) { fetcher in
                let first = try await fetcher.fetchPrefix(server.url("/tagged"), examine: Self.want(10))
                guard case .fetched(_, let resource) = first else { Issue.record("not fetched"); return }
                #expect(resource.entityTag == "\"v1\"")
                let second = try await fetcher.fetchPrefix(
                    server.url("/tagged"), revalidating: resource.validator, examine: Self.want(10))
                guard case .notModified = second else { Issue.record("expected 304"); return }
                server.serve("/tagged", .init(body: Self.bytes(1000), entityTag: "\"v2\""))
                let third = try await fetcher.fetchPrefix(
                    server.url("/tagged"), revalidating: resource.validator, examine: Self.want(10))
                guard case .fetched(_, let changed) = third else { Issue.record("expected a fetch"); return }
                #expect(changed.entityTag == "\"v2\"")
            }
        }
    }

    @Test func loopbackIsRefusedUnlessAllowed() async throws {
        try await TestHTTPServer.with { server in
            server.serve("/a.bin", bytes: Self.bytes(100))
            try await RemoteFetcher.withFetcher(logger: logger) { fetcher in
                for url in [
                    server.url("/a.bin"), "http://[::1]:\(server.port)/a.bin", "http://localhost:\(server.port)/a.bin",
                ] {
                    let error = await #expect(throws: RemoteFetchError.self) {
                        try await fetcher.fetchPrefix(url, examine: Self.want(10))
                    }
                    #expect(error?.code == .privateAddress)
                    #expect(error?.message.contains("--allow-private-network") == true)
                }
                // Only http and https are fetched.
                let error = await #expect(throws: RemoteFetchError.self) {
                    try await fetcher.streamBody("ftp://example.com/a")
                }
                #expect(error?.code == .unsupportedScheme)
            }
            #expect(server.requests.isEmpty)
        }
    }

    @Test func concurrencyIsLimited() async throws {
        try await TestHTTPServer.with { server in
            server.serve("/slowish", .init(body: Self.bytes(100), headDelay: .milliseconds(150)))
            var configuration = local
            configuration.maximumConcurrentRequests = 2
            let started = ContinuousClock.now
            try await RemoteFetcher.withFetcher(configuration: configuration, logger: logger) { fetcher in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<6 {
                        group.addTask {
                            _ = try await fetcher.fetchPrefix(server.url("/slowish"), examine: Self.want(10))
                        }
                    }
                    try await group.waitForAll()
                }
            }
            // Six 150 ms responses two at a time take at least three rounds.
            #expect(ContinuousClock.now - started >= .milliseconds(440))
            #expect(server.requests(for: "/slowish").count == 6)
        }
    }
}

struct NetworkAddressPolicyTests {
    @Test(arguments: [
        "127.0.0.1", "127.8.9.10", "10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254",
        "0.0.0.0", "100.64.0.1", "224.0.0.1", "255.255.255.255", "::", "::1", "fe80::1", "fc00::1", "fd12:3456::1",
        "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "[::1]", "64:ff9b::a00:1", "2002:7f00:1::",
        "ff02::1", "fec0::1",
    ])
    func restrictedAddresses(_ address: String) {
        #expect(NetworkAddressPolicy.isRestricted(literal: address) == true)
    }

    @Test(arguments: [
        "8.8.8.8", "1.1.1.1", "172.32.0.1", "192.169.0.1", "2001:4860:4860::8888", "::ffff:8.8.8.8", "100.128.0.1",
    ])
    func publicAddresses(_ address: String) {
        #expect(NetworkAddressPolicy.isRestricted(literal: address) == false)
    }

    @Test func hostNamesAreNotLiterals() {
        #expect(NetworkAddressPolicy.isRestricted(literal: "example.com") == nil)
    }

    @Test func contentRangeParses() {
        #expect(
            RemoteFetcher.contentRange("bytes 0-4095/100000").map { [$0.start, $0.end, $0.total ?? -1] } == [
                0, 4095, 100_000,
            ])
        #expect(RemoteFetcher.contentRange("bytes 5-9/*")?.total == nil)
        #expect(RemoteFetcher.contentRange("items 1-2/3") == nil)
    }
}

/// The counts `RemoteBody.collected` admitted, in order.
private final class AdmittedCounts: Sendable {
    private let held = Mutex<[Int]>([])
    func add(_ count: Int) { held.withLock { $0.append(count) } }
    var counts: [Int] { held.withLock { $0 } }
}

/// The two ways a body is read: chunk by chunk by the caller (a prefix, a streamed feed), or whole
/// (`RemoteBody.collected`: a subscription's feed, a feed posted as a URL, an image to decode).
enum BodyReading: Sendable, CaseIterable {
    case streamed, collected

    /// Reads `body` whole; `pause` runs after each chunk (streamed) or as each chunk is admitted (collected).
    func read(_ body: RemoteBody, pausing pause: @escaping @Sendable () async throws -> Void) async throws -> [UInt8] {
        switch self {
        case .streamed:
            var received: [UInt8] = []
            for try await chunk in body {
                received += chunk
                try await pause()
            }
            return received
        case .collected:
            return try await body.collected(capacity: 0) { _ in try await pause() }
        }
    }
}

/// A server of one answer on 127.0.0.1: a 200 that declares `declared` bytes, `sent` of them, then a reset
/// (`SO_LINGER` 0), as a peer that crashes mid-body does.
private final class ResettingServer: Sendable {
    let port: Int

    init(declaring declared: Int, sending sent: Int) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        guard listener >= 0, bound == 0, named == 0, listen(listener, 1) == 0 else {
            close(listener)
            throw RemoteFetchError(code: .connection, url: "-", reason: "the test server could not listen")
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        let answer = Array("HTTP/1.1 200 OK\r\nContent-Length: \(declared)\r\n\r\n".utf8) + [UInt8](repeating: 120, count: sent)
        Thread {
            let connection = accept(listener, nil, nil)
            close(listener)
            guard connection >= 0 else { return }
            var request: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !request.suffix(4).elementsEqual(Array("\r\n\r\n".utf8)) {
                let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { break }
                request += buffer[..<count]
            }
            _ = answer.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(connection, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
            close(connection)
        }.start()
    }
}
