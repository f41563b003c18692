import AsyncHTTPClient
import Logging
import NIOCore
import Synchronization

/// HTTP clients that connect to one host at one vetted IP address, so that the address a fetch checked is the
/// address it reaches: a name that resolves to a public address for the check and to a private one a moment later
/// (DNS rebinding) cannot steer the connection.
///
/// Each client is an `HTTPClient` whose `dnsOverride` maps the host to the address: it connects to the address
/// without resolving anything, and still sends the URL's host in `Host` and as the TLS server name (SNI), and checks
/// the server's certificate against that name. Clients are kept by host and address, so fetches from one host reuse
/// its connections; past ``capacity``, the least recently used client that no fetch holds is shut down.
final class VettedAddressClients: Sendable {
    /// Holds a client while a fetch uses it (its response's body included); the client is not shut down before
    /// every lease on it is released (when the lease is deinitialized).
    final class Lease: Sendable {
        let client: HTTPClient
        private let release: @Sendable () -> Void

        init(client: HTTPClient, release: @escaping @Sendable () -> Void) {
            self.client = client
            self.release = release
        }

        deinit { release() }
    }

    private struct Key: Hashable {
        var host: String
        var address: String
    }

    private struct Entry {
        var client: HTTPClient
        var leases: Int
        var lastUse: UInt64
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        var clock: UInt64 = 0
        var isShutDown = false
    }

    /// How many clients are kept at most (clients held by fetches are kept beyond it).
    let capacity: Int
    private let configuration: HTTPClient.Configuration
    private let logger: Logger
    private let state = Mutex(State())

    /// - Parameter configuration: The configuration of every client; its `dnsOverride` is set per client.
    init(configuration: HTTPClient.Configuration, capacity: Int = 64, logger: Logger) {
        self.configuration = configuration
        self.capacity = max(1, capacity)
        self.logger = logger
    }

    /// A client that connects to `host` at `address`, held until the lease is released.
    /// - Parameters:
    ///   - host: The host as the URL writes it (what goes into `Host` and SNI).
    ///   - address: The vetted IP address, as text.
    func lease(host: String, address: String) throws -> Lease {
        let key = Key(host: host, address: address)
        var evicted: [HTTPClient] = []
        let client = try state.withLock { state throws -> HTTPClient in
            guard !state.isShutDown else { throw HTTPClientError.alreadyShutdown }
            state.clock += 1
            if var entry = state.entries[key] {
                entry.leases += 1
                entry.lastUse = state.clock
                state.entries[key] = entry
                return entry.client
            }
            var configuration = self.configuration
            configuration.dnsOverride = [host: address]
            let client = HTTPClient(
                eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration,
                backgroundActivityLogger: logger)
            state.entries[key] = Entry(client: client, leases: 1, lastUse: state.clock)
            // Past the capacity, the least recently used clients that nothing holds go.
            let idle = state.entries.filter { $0.value.leases == 0 }.sorted { $0.value.lastUse < $1.value.lastUse }
            for (idleKey, entry) in idle.prefix(max(0, state.entries.count - capacity)) {
                state.entries.removeValue(forKey: idleKey)
                evicted.append(entry.client)
            }
            return client
        }
        for client in evicted { Self.shutDownLater(client) }
        return Lease(client: client) { [weak self] in self?.release(key) }
    }

    private func release(_ key: Key) {
        state.withLock { state in
            guard var entry = state.entries[key] else { return }
            entry.leases -= 1
            state.entries[key] = entry
        }
    }

    /// How many clients are kept now (for tests).
    var count: Int { state.withLock { $0.entries.count } }

    /// Shuts every client down; no lease can be taken afterwards.
    func shutdown() async {
        let clients = state.withLock { state in
            state.isShutDown = true
            defer { state.entries.removeAll() }
            return state.entries.values.map(\.client)
        }
        for client in clients { try? await client.shutdown() }
    }

    private static func shutDownLater(_ client: HTTPClient) {
        Task { try? await client.shutdown() }
    }
}
