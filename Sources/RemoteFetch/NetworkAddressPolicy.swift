#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Which IP addresses a fetch may connect to.
///
/// Refused unless private networks are allowed: unspecified (`0.0.0.0/8`, `::`), loopback
/// (`127.0.0.0/8`, `::1`), private (`10/8`, `172.16/12`, `192.168/16`, `100.64/10`, `fc00::/7`),
/// link-local (`169.254/16`, `fe80::/10`), site-local `fec0::/10`, multicast and reserved ranges,
/// and IPv6 forms that embed such an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible
/// `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`).
public enum NetworkAddressPolicy {
    /// Whether an IPv4 address (4 bytes, network order) is one that must not be fetched by default.
    /// - Parameter bytes: The four bytes of the address.
    /// - Returns: `true` for unspecified, loopback, private, shared, link-local, benchmark,
    ///   multicast, reserved and broadcast addresses.
    public static func isRestricted(ipv4 bytes: [UInt8]) -> Bool {
        guard bytes.count == 4 else { return true }
        let (a, b) = (bytes[0], bytes[1])
        switch a {
        case 0, 10, 127: return true
        case 100 where b & 0xC0 == 64: return true  // 100.64.0.0/10, carrier-grade NAT
        case 169 where b == 254: return true
        case 172 where b & 0xF0 == 16: return true
        case 192 where b == 168: return true
        case 192 where b == 0 && bytes[2] == 0: return true  // 192.0.0.0/24, protocol assignments
        case 198 where b & 0xFE == 18: return true  // 198.18.0.0/15, benchmarking
        case 224...255: return true  // multicast, reserved, broadcast
        default: return false
        }
    }

    /// Whether an IPv6 address (16 bytes) is one that must not be fetched by default.
    /// - Parameter bytes: The sixteen bytes of the address.
    /// - Returns: `true` for `::`, `::1`, unique-local, link-local, site-local and multicast
    ///   addresses, and for those embedding a restricted IPv4 address.
    public static func isRestricted(ipv6 bytes: [UInt8]) -> Bool {
        guard bytes.count == 16 else { return true }
        let firstTenZero = bytes[0..<10].allSatisfy { $0 == 0 }
        if firstTenZero && bytes[10] == 0xFF && bytes[11] == 0xFF {
            return isRestricted(ipv4: Array(bytes[12..<16]))  // IPv4-mapped
        }
        if firstTenZero && bytes[10] == 0 && bytes[11] == 0 {
            // `::`, `::1` and the deprecated IPv4-compatible form `::a.b.c.d`.
            return true
        }
        if bytes[0] == 0x00, bytes[1] == 0x64, bytes[2] == 0xFF, bytes[3] == 0x9B, bytes[4..<12].allSatisfy({ $0 == 0 })
        {
            return isRestricted(ipv4: Array(bytes[12..<16]))  // NAT64
        }
        if bytes[0] == 0x20, bytes[1] == 0x02 {
            return isRestricted(ipv4: Array(bytes[2..<6]))  // 6to4
        }
        if bytes[0] & 0xFE == 0xFC { return true }  // fc00::/7 unique local
        if bytes[0] == 0xFE, bytes[1] & 0xC0 == 0x80 { return true }  // fe80::/10 link-local
        if bytes[0] == 0xFE, bytes[1] & 0xC0 == 0xC0 { return true }  // fec0::/10 site-local
        if bytes[0] == 0xFF { return true }  // multicast
        return false
    }

    /// Whether a textual IP address is restricted; `nil` when the text is not an IP address.
    /// - Parameter text: `a.b.c.d` or an IPv6 address (brackets allowed).
    /// - Returns: Whether it is restricted, or `nil` for a host name.
    public static func isRestricted(literal text: String) -> Bool? {
        var host = text
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            return isRestricted(ipv4: withUnsafeBytes(of: &v4) { Array($0) })
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 {
            return isRestricted(ipv6: withUnsafeBytes(of: &v6) { Array($0) })
        }
        return nil
    }

    /// Resolves a host name to all its addresses, as text, each with whether it is restricted.
    ///
    /// Blocking (`getaddrinfo`): call it on a thread that may block.
    /// - Parameter host: A host name or an IP literal.
    /// - Returns: Every address, or an error message from the resolver.
    static func resolve(_ host: String) -> Result<[(address: String, restricted: Bool)], ResolutionFailure> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Darwin)
            hints.ai_socktype = SOCK_STREAM
        #else
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        var literal = host
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
        let status = getaddrinfo(literal, nil, &hints, &list)
        guard status == 0 else {
            return .failure(ResolutionFailure(message: String(cString: gai_strerror(status))))
        }
        defer { freeaddrinfo(list) }
        var addresses: [(String, Bool)] = []
        var cursor = list
        while let entry = cursor {
            defer { cursor = entry.pointee.ai_next }
            guard let socketAddress = entry.pointee.ai_addr else { continue }
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
            switch Int32(socketAddress.pointee.sa_family) {
            case AF_INET:
                var address = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                inet_ntop(AF_INET, &address, &text, socklen_t(text.count))
                let bytes = withUnsafeBytes(of: &address) { Array($0) }
                addresses.append((addressText(text), isRestricted(ipv4: bytes)))
            case AF_INET6:
                var address = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    $0.pointee.sin6_addr
                }
                inet_ntop(AF_INET6, &address, &text, socklen_t(text.count))
                let bytes = withUnsafeBytes(of: &address) { Array($0) }
                addresses.append((addressText(text), isRestricted(ipv6: bytes)))
            default:
                continue
            }
        }
        return .success(addresses)
    }

    struct ResolutionFailure: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }
}

/// The text inet_ntop wrote: the bytes before the terminating NUL.
private func addressText(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
