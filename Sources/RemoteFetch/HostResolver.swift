import NIOPosix

/// Turns a host name into IP addresses for ``RemoteFetcher``, which vets them and connects to the one it vetted.
///
/// The system's resolver (`getaddrinfo`) by default. Injectable, so that a test can play a DNS server that answers
/// differently each time it is asked (DNS rebinding).
public struct HostResolver: Sendable {
    private let lookUp: @Sendable (String) async throws -> [String]

    /// - Parameter lookUp: The addresses of a host name, as text (`93.184.215.14`, `2606:2800:21f:cb07::1`), in the
    ///   order to try them; an error when the name cannot be resolved (its description is shown).
    public init(_ lookUp: @escaping @Sendable (_ host: String) async throws -> [String]) {
        self.lookUp = lookUp
    }

    /// The system's resolver, run on NIO's blocking thread pool.
    public static let system = HostResolver { host in
        try await NIOThreadPool.singleton.runIfActive { try NetworkAddressPolicy.resolve(host).get().map(\.address) }
    }

    func addresses(of host: String) async throws -> [String] { try await lookUp(host) }
}
