import AsyncHTTPClient
import FeedLayoutTestSupport
import Logging
import NIOCore
import Synchronization
import Testing

@testable import RemoteFetch

/// A host is resolved once per request, its addresses vetted, and the connection made to the vetted address: a
/// DNS server that answers a public address to the check and a private one afterwards cannot steer a fetch there.
///
/// Two real servers answer the same URL at two loopback addresses: 127.0.0.1, which these tests' address policy
/// calls public (the vetted one), and 127.0.0.2, private as loopback is (the rebound one). The injected resolver is
/// the DNS server that changes its answer.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct DNSRebindingTests {
    let logger = Logger(label: "test.dns-rebinding")
    let strict = RemoteFetchConfiguration(
        connectTimeout: .seconds(3600), readTimeout: .seconds(3600), totalTimeout: .seconds(3600),
        allowPrivateNetwork: false)

    /// A DNS server whose answers are scripted: the n-th question gets the n-th answer (the last one after that).
    final class ScriptedResolver: Sendable {
        let answers: [[String]]
        let questions = Mutex<[String]>([])

        init(_ answers: [[String]]) { self.answers = answers }

        var resolver: HostResolver {
            HostResolver { host in
                let asked = self.questions.withLock { questions in
                    questions.append(host)
                    return questions.count
                }
                return self.answers[min(asked, self.answers.count) - 1]
            }
        }

        var count: Int { questions.withLock { $0.count } }
    }

    /// 127.0.0.1 plays a public address; every other address is judged as usual.
    static func policy(_ address: String) -> Bool {
        address == "127.0.0.1" ? false : NetworkAddressPolicy.isRestricted(literal: address) ?? true
    }

    /// The vetted server (127.0.0.1) and the rebound one (127.0.0.2), on one port, both serving `path`.
    static func withServers(
        _ path: String, _ body: (_ vetted: TestHTTPServer, _ rebound: TestHTTPServer) async throws -> Void
    ) async throws {
        let vetted = try await TestHTTPServer.start()
        let rebound: TestHTTPServer
        do {
            rebound = try await TestHTTPServer.start(host: "127.0.0.2", port: vetted.port)
        } catch {
            try? await vetted.shutdown()
            throw error
        }
        vetted.serve(path, bytes: Array("the public answer".utf8))
        rebound.serve(path, bytes: Array("the private answer".utf8))
        do {
            try await body(vetted, rebound)
        } catch {
            try? await vetted.shutdown()
            try? await rebound.shutdown()
            throw error
        }
        try await vetted.shutdown()
        try await rebound.shutdown()
    }

    func fetcher(_ resolver: ScriptedResolver) -> RemoteFetcher {
        RemoteFetcher(
            configuration: strict, resolver: resolver.resolver, isRestrictedAddress: Self.policy, logger: logger)
    }

    static func collect(_ body: RemoteBody) async throws -> String {
        var bytes: [UInt8] = []
        for try await chunk in body { bytes += chunk }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func theConnectionGoesToTheVettedAddressWithTheHostsNameAndANameRevettedToAPrivateOneIsRefused() async throws
    {
        try await Self.withServers("/feed.xml") { vetted, rebound in
            // Public to the check, private to whoever asks next (a connection that resolved the name again).
            let dns = ScriptedResolver([["127.0.0.1"], ["127.0.0.2"]])
            let fetcher = fetcher(dns)
            let url = "http://rebinding.test:\(vetted.port)/feed.xml"
            let (body, _) = try await fetcher.streamBody(url)
            #expect(try await Self.collect(body) == "the public answer")
            #expect(dns.count == 1, "the name is resolved once, for the check, and connected to as checked")
            #expect(vetted.requests(for: "/feed.xml").map { $0.headers["host"] } == ["rebinding.test:\(vetted.port)"])
            #expect(rebound.requests.isEmpty)

            // The next request asks again and is told the private address: refused, nothing is sent there.
            let refused = await #expect(throws: RemoteFetchError.self) { try await fetcher.streamBody(url) }
            #expect(refused?.code == .privateAddress)
            #expect(refused?.reason.contains("127.0.0.2") == true, "\(refused?.reason ?? "")")
            #expect(rebound.requests.isEmpty)
            try await fetcher.shutdown()
        }
    }

    @Test func prefixesAndRangeRequestsUseTheVettedAddressAndItsConnections() async throws {
        try await Self.withServers("/photo.bin") { vetted, rebound in
            let photo = (0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            vetted.serve("/photo.bin", bytes: photo)
            let dns = ScriptedResolver([["127.0.0.1"], ["127.0.0.1"], ["127.0.0.2"]])
            let fetcher = fetcher(dns)
            let url = "http://photos.rebinding.test:\(vetted.port)/photo.bin"
            // Two ranges: the second request is vetted again (the second answer) and goes to the same client.
            let outcome = try await fetcher.fetchPrefix(url, firstRangeSize: 1000) { bytes, complete in
                bytes.count >= 5000 || complete ? .finished(Array(bytes.prefix(5000))) : .needMoreBytes(atLeast: 5000)
            }
            guard case .fetched(let prefix, let resource) = outcome else {
                Issue.record("not fetched")
                return
            }
            #expect(prefix == Array(photo.prefix(5000)))
            #expect(resource.requestCount == 2)
            #expect(dns.count == 2)
            #expect(fetcher.vettedClientCount == 1, "one client per host and address, its connections reused")
            #expect(rebound.requests.isEmpty)
            try await fetcher.shutdown()
        }
    }

    @Test func aNameWithAnyPrivateAddressIsRefusedBeforeAnythingIsSent() async throws {
        try await Self.withServers("/feed.xml") { vetted, rebound in
            let dns = ScriptedResolver([["127.0.0.1", "10.1.2.3"]])
            let fetcher = fetcher(dns)
            let refused = await #expect(throws: RemoteFetchError.self) {
                try await fetcher.streamBody("http://mixed.rebinding.test:\(vetted.port)/feed.xml")
            }
            #expect(refused?.code == .privateAddress)
            #expect(refused?.reason.contains("10.1.2.3") == true)
            #expect(vetted.requests.isEmpty && rebound.requests.isEmpty)
            try await fetcher.shutdown()
        }
    }

    @Test func aResolverThatFailsIsANameResolutionErrorNamingTheHost() async throws {
        let fetcher = RemoteFetcher(
            configuration: strict,
            resolver: HostResolver { _ in
                throw NetworkAddressPolicy.ResolutionFailure(message: "Name or service not known")
            },
            logger: logger)
        let failed = await #expect(throws: RemoteFetchError.self) {
            try await fetcher.streamBody("http://nowhere.rebinding.test/feed.xml")
        }
        #expect(failed?.code == .nameResolution)
        #expect(failed?.reason.contains("cannot resolve nowhere.rebinding.test (Name or service not known)") == true)
        try await fetcher.shutdown()
    }

    @Test func leastRecentlyUsedIdleClientsAreShutPastTheCapacityAndHeldOnesStay() async throws {
        let clients = VettedAddressClients(configuration: HTTPClient.Configuration(), capacity: 2, logger: logger)
        let held = try clients.lease(host: "a.test", address: "192.0.2.1")
        do { _ = try clients.lease(host: "b.test", address: "192.0.2.2") }
        do { _ = try clients.lease(host: "c.test", address: "192.0.2.3") }
        // b.test was idle and least recently used: shut down; a.test is held.
        #expect(clients.count == 2)
        let again = try clients.lease(host: "a.test", address: "192.0.2.1")
        #expect(again.client === held.client)
        await clients.shutdown()
        #expect(throws: (any Error).self) { try clients.lease(host: "a.test", address: "192.0.2.1") }
    }
}
