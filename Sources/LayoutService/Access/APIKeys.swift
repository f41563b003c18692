import ByteTools
import Foundation

/// What a key may do. `admin` includes the other two.
public enum AccessScope: String, Sendable, CaseIterable, Comparable {
    case read, write, admin

    public static func < (lhs: AccessScope, rhs: AccessScope) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// One client's key, as the keys file names it; the token itself is never held, only its digest.
public struct APIKey: Sendable, Equatable {
    public var name: String
    public var scopes: Set<AccessScope>
    /// SHA-256 of the token's UTF-8 bytes.
    var tokenDigest: [UInt8]

    public func allows(_ scope: AccessScope) -> Bool {
        scopes.contains(scope) || scopes.contains(.admin)
    }
}

/// The keys a service accepts (`--api-keys FILE`): one per line, `NAME:SCOPES:SHA256HEX`, with scopes
/// comma-separated from `read`, `write` and `admin` and the lower-case hex SHA-256 of the token's UTF-8 bytes, so
/// the file never holds a token in clear. Blank lines and lines starting with `#` are skipped.
///
/// A token is checked by its digest against every key's digest in full, whatever matched before: how long the check
/// takes tells nothing of how close a guess came.
public struct APIKeys: Sendable {
    public let keys: [APIKey]

    public var isEmpty: Bool { keys.isEmpty }

    /// Reads the keys in `text`; `source` names it in errors (`keys.txt:3: …`).
    public init(text: String, source: String) throws(APIKeysError) {
        var keys: [APIKey] = []
        for (offset, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces.union(CharacterSet(charactersIn: "\r")))
            if line.isEmpty || line.hasPrefix("#") { continue }
            let place = "\(source):\(offset + 1)"
            let fields = line.split(separator: ":", omittingEmptySubsequences: false)
            guard fields.count == 3 else {
                throw APIKeysError("\(place): expected NAME:SCOPES:SHA256HEX, got \(fields.count) field(s)")
            }
            let name = String(fields[0])
            guard !name.isEmpty, name.utf8.count <= 64,
                name.utf8.allSatisfy({ Self.nameBytes.contains($0) })
            else {
                throw APIKeysError("\(place): the name '\(name)' is not 1 to 64 letters, digits, '.', '_' or '-'")
            }
            guard !keys.contains(where: { $0.name == name }) else {
                throw APIKeysError("\(place): the name '\(name)' is used twice")
            }
            var scopes = Set<AccessScope>()
            for scope in fields[1].split(separator: ",", omittingEmptySubsequences: false) {
                guard let known = AccessScope(rawValue: scope.trimmingCharacters(in: .whitespaces)) else {
                    throw APIKeysError("\(place): unknown scope '\(scope)' (read, write or admin)")
                }
                scopes.insert(known)
            }
            let hex = fields[2]
            guard hex.utf8.count == 64, let digest = Self.bytes(hex: hex) else {
                throw APIKeysError(
                    "\(place): the key's digest is not 64 lower-case hex digits (the SHA-256 of the token: "
                        + "printf %s TOKEN | sha256sum)")
            }
            guard !keys.contains(where: { $0.tokenDigest == digest }) else {
                throw APIKeysError("\(place): the same token digest is given twice")
            }
            keys.append(APIKey(name: name, scopes: scopes, tokenDigest: digest))
        }
        self.keys = keys
    }

    /// Reads the keys file at `path`.
    public init(contentsOfFile path: String) throws(APIKeysError) {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw APIKeysError("\(path): cannot read the keys file (\(error.localizedDescription))")
        }
        try self.init(text: text, source: path)
        if keys.isEmpty { throw APIKeysError("\(path): no keys in the file") }
    }

    /// The key whose token this is, or nil.
    public func key(forToken token: some Collection<UInt8>) -> APIKey? {
        let digest = SHA256.digest(Array(token))
        var found: APIKey?
        for key in keys where Self.constantTimeEqual(key.tokenDigest, digest) && found == nil {
            found = key
        }
        return found
    }

    /// Compares every byte, whatever differs first.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    private static let nameBytes = Set(Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-".utf8))

    private static func bytes(hex: Substring) -> [UInt8]? {
        var bytes: [UInt8] = []
        var high: UInt8?
        for byte in hex.utf8 {
            let value: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = byte - UInt8(ascii: "a") + 10
            default: return nil
            }
            if let first = high {
                bytes.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return bytes
    }
}

public struct APIKeysError: Error, CustomStringConvertible, Sendable {
    public var description: String
    init(_ description: String) { self.description = description }
}
