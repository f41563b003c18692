import FeedLayoutTestSupport
import Foundation
import Logging
import Testing

@testable import LayoutStore

/// The shared store over TLS and with a password kept off the URL: a throwaway cluster with `ssl = on`, a
/// certificate signed by a certificate authority made here with `openssl`, and only `hostssl` connections with a
/// password accepted.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct PostgresTLSTests {
    static let logger = Logger(label: "test.postgres-tls")
    static let password = StorePassword("correct horse battery", source: "FEEDLAYOUT_STORE_PASSWORD")

    /// A certificate authority and a server certificate it signed (for `localhost` and `127.0.0.1`), and a second
    /// authority that signed nothing the server has.
    struct Certificates {
        let folder: URL
        var authority: String { folder.appendingPathComponent("ca.pem").path }
        var otherAuthority: String { folder.appendingPathComponent("other-ca.pem").path }
        var certificate: String { folder.appendingPathComponent("server.pem").path }
        var key: String { folder.appendingPathComponent("server.key").path }

        init() async throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent(
                "feedlayout-tls-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
                .write(to: folder.appendingPathComponent("server.ext"), atomically: true, encoding: .utf8)
            for arguments in [
                [
                    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days",
                    "2",
                    "-subj", "/CN=FeedLayout test authority",
                ],
                [
                    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "other-ca.key", "-out", "other-ca.pem",
                    "-days", "2", "-subj", "/CN=FeedLayout other authority",
                ],
                [
                    "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj",
                    "/CN=localhost",
                ],
                [
                    "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out",
                    "server.pem", "-days", "2", "-extfile", "server.ext",
                ],
            ] {
                let folder = self.folder
                let result = try await onOwnThread {
                    try ChildProcess.run(
                        "/usr/bin/openssl", arguments, environment: ProcessInfo.processInfo.environment,
                        directory: folder.path, stdin: nil, stderrPath: "/dev/null", timeout: 60)
                }
                guard result.status == 0 else {
                    throw TestInputError(message: "openssl \(arguments.joined(separator: " ")) failed")
                }
            }
        }
    }

    /// A cluster that takes TLS connections with the password only, for `body`.
    static func withTLSCluster(_ body: (PostgresTestCluster, Certificates) async throws -> Void) async throws {
        let certificates = try await Certificates()
        defer { try? FileManager.default.removeItem(at: certificates.folder) }
        try await PostgresTestCluster.with { cluster in
            try await cluster.requireTLS(
                certificate: certificates.certificate, key: certificates.key, password: password.password)
            try await body(cluster, certificates)
        }
    }

    /// Opens the store; a refusal (TLS, password) is thrown at once, a server too busy to answer in time is tried
    /// again, as the other PostgreSQL tests do.
    static func open(_ url: String, password: StorePassword? = Self.password) async throws -> PostgresLayoutStore {
        try await PostgresProbeCacheTests.retryingWhileUnanswered {
            try await PostgresLayoutStore.open(url: url, password: password, leaseDuration: .seconds(30), logger: logger)
        }
    }

    @Test func requireAndVerifyFullConnectAndTheRestIsRefusedWithAMessageNamingTheStore() async throws {
        try await Self.withTLSCluster { cluster, certificates in
            let base = "postgres://postgres@127.0.0.1:\(cluster.port)/feedlayout"

            // Encrypted, unverified.
            let required = try await Self.open(base + "?sslmode=require")
            try await required.checkAvailability()
            required.close()

            // Encrypted and verified: the authority that signed the server's certificate, by IP and by name.
            for host in ["127.0.0.1", "localhost"] {
                let verified = try await Self.open(
                    "postgres://postgres@\(host):\(cluster.port)/feedlayout?sslmode=verify-full&sslrootcert="
                        + certificates.authority)
                try await verified.checkAvailability()
                verified.close()
            }

            // Another authority: the server is not who it says.
            let wrongAuthority = base + "?sslmode=verify-full&sslrootcert=" + certificates.otherAuthority
            let untrusted = await #expect(throws: StoreError.self) { try await Self.open(wrongAuthority) }
            #expect(untrusted?.code == .cannotOpen)
            #expect(untrusted?.message.hasPrefix(wrongAuthority) == true, "\(untrusted?.message ?? "")")
            #expect(untrusted?.message.contains("TLS") == true, "\(untrusted?.message ?? "")")

            // No TLS: the cluster takes TCP connections over TLS only.
            let plain = await #expect(throws: StoreError.self) { try await Self.open(base + "?sslmode=disable") }
            #expect(plain?.message.hasPrefix(base + "?sslmode=disable") == true, "\(plain?.message ?? "")")
            #expect(plain?.message.contains("no encryption") == true, "\(plain?.message ?? "")")

            // The password is needed, and a wrong one is refused.
            let wrong = await #expect(throws: StoreError.self) {
                try await Self.open(base + "?sslmode=require", password: StorePassword("wrong", source: "PGPASSWORD"))
            }
            #expect(wrong?.message.contains("password authentication failed") == true, "\(wrong?.message ?? "")")
        }
    }

    @Test func aPasswordInTheURLStillWorksButNeverShowsInMessages() async throws {
        try await Self.withTLSCluster { cluster, _ in
            let url =
                "postgres://postgres:\(Self.password.password)@127.0.0.1:\(cluster.port)/feedlayout?sslmode=require"
            let store = try await Self.open(url, password: nil)
            #expect(!store.displayURL.contains(Self.password.password))
            try await store.checkAvailability()
            store.close()
            let refused = await #expect(throws: StoreError.self) {
                try await Self.open(
                    "postgres://postgres:wrong-one@127.0.0.1:\(cluster.port)/feedlayout?sslmode=require", password: nil)
            }
            #expect(refused?.message.contains("wrong-one") == false)
        }
    }

    @Test func storeURLsAreReadWithLibpqsNamesAndBadOnesAreNamed() throws {
        let plain = try PostgresConnectionSettings(url: "postgres://app@db.example:6432/layouts")
        #expect(plain.tlsMode == .disable && plain.port == 6432 && plain.database == "layouts")
        let verified = try PostgresConnectionSettings(
            url: "postgresql://app:secret@db.example/layouts?sslmode=verify-full&sslrootcert=/etc/ssl/db-ca.pem")
        #expect(verified.tlsMode == .verifyFull && verified.rootCertificateFile == "/etc/ssl/db-ca.pem")
        #expect(verified.urlPassword == "secret" && !verified.displayURL.contains("secret"))
        for (url, expected) in [
            (
                "postgres://app:secret@db/x?sslmode=verify-ca",
                "sslmode=verify-ca is not one of disable, prefer, require, verify-full"
            ),
            ("postgres://app:secret@db/x?sslcert=/a.pem", "unknown parameter sslcert"),
            ("postgres://app:secret@db/x?sslrootcert=/a.pem", "sslrootcert is used by sslmode=verify-full only"),
            ("postgres://db/x", "not a PostgreSQL URL"),
        ] {
            let error = #expect(throws: StoreError.self) { try PostgresConnectionSettings(url: url) }
            #expect(error?.message.contains(expected) == true, "\(url): \(error?.message ?? "")")
            #expect(error?.message.contains("secret") == false, "\(url): the password is never shown")
        }
        let missing = #expect(throws: StoreError.self) {
            try PostgresConnectionSettings(
                url: "postgres://app@db/x?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem"
            )
            .clientTLS()
        }
        #expect(missing?.message.contains("sslrootcert /nonexistent/ca.pem cannot be read") == true)
    }

    @Test func thePasswordComesFromAFileThenTheEnvironment() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("feedlayout-password-\(UUID())")
        defer { try? FileManager.default.removeItem(at: file) }
        try "from the file\nsecond line ignored\n".write(to: file, atomically: true, encoding: .utf8)
        let environment = ["FEEDLAYOUT_STORE_PASSWORD": "from feedlayout", "PGPASSWORD": "from libpq"]
        #expect(try StorePassword.find(file: file.path, environment: environment)?.password == "from the file")
        #expect(try StorePassword.find(file: nil, environment: environment)?.password == "from feedlayout")
        #expect(try StorePassword.find(file: nil, environment: ["PGPASSWORD": "from libpq"])?.source == "PGPASSWORD")
        #expect(try StorePassword.find(file: nil, environment: [:]) == nil)
        let missing = #expect(throws: StoreError.self) {
            try StorePassword.find(file: "/nonexistent/password", environment: environment)
        }
        #expect(missing?.message.hasPrefix("--store-password-file /nonexistent/password: cannot be read") == true)
        try "\n".write(to: file, atomically: true, encoding: .utf8)
        let empty = #expect(throws: StoreError.self) { try StorePassword.find(file: file.path, environment: [:]) }
        #expect(empty?.message.contains("the first line is empty") == true)
    }
}
