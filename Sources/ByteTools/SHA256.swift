internal import CCrypto

/// SHA-256 (FIPS 180-4), for the font digests pages record and the service's digest of a posted feed: the hash
/// anyone can recompute with standard tools. OpenSSL's libcrypto computes it: a feed can be hundreds of megabytes,
/// and libcrypto uses the processor's SHA instructions (`openssl dgst -sha256` of a 220 MB feed: 0.13 s of CPU on
/// this project's machine; the portable Swift code it replaced was 7.5 % of the service's CPU in a run that took
/// 20 such feeds of 11 MB).
package enum SHA256 {
    /// The 32 bytes of the digest of `bytes`.
    package static func digest(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        bytes.withUnsafeBufferPointer { input in
            digest.withUnsafeMutableBufferPointer { output in
                _ = CCrypto.SHA256(input.baseAddress, input.count, output.baseAddress)
            }
        }
        return digest
    }

    /// The digest of `bytes` as 64 lower-case hex digits.
    package static func hexDigest(_ bytes: [UInt8]) -> String { hex(digest(bytes)) }

    /// A digest computed piece by piece, as bytes arrive; a copy goes on from the same point on its own.
    /// One task at a time uses one (it is handed from task to task, never shared).
    package final class Hasher: @unchecked Sendable {
        private let context: OpaquePointer

        package init() {
            context = EVP_MD_CTX_new()!
            EVP_DigestInit_ex(context, EVP_sha256(), nil)
        }

        private init(copying other: Hasher) {
            context = EVP_MD_CTX_new()!
            EVP_MD_CTX_copy_ex(context, other.context)
        }

        deinit { EVP_MD_CTX_free(context) }

        package func update(_ bytes: UnsafeRawBufferPointer) {
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
            EVP_DigestUpdate(context, base, bytes.count)
        }

        /// A hasher that has seen the same bytes as this one.
        package func copy() -> Hasher { Hasher(copying: self) }

        /// The digest of the bytes seen, as 64 lower-case hex digits; the hasher takes no more bytes after it.
        package func hexDigest() -> String {
            var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
            var length: UInt32 = 0
            EVP_DigestFinal_ex(context, &digest, &length)
            return hex(digest)
        }
    }

    private static func hex(_ digest: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(64)
        for byte in digest {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: hex, as: UTF8.self)
    }
}
