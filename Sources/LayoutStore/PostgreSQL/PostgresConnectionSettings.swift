import Foundation
import PostgresNIO

/// How to reach a PostgreSQL store, read from its `--store` URL:
/// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=MODE&sslrootcert=FILE]`.
///
/// The query parameters have libpq's names and meanings: `sslmode` is `disable` (the default: plain TCP, for a
/// store on loopback or a private network), `prefer` (TLS when the server offers it, unverified), `require` (TLS
/// always, the certificate not verified) or `verify-full` (TLS, the certificate chain verified against
/// `sslrootcert`, or the system's trusted roots without it, and the host name or IP address checked against the
/// certificate). The password is best given apart from the URL (``StorePassword``): a URL on a command line is seen
/// by every user of the machine in `ps`.
struct PostgresConnectionSettings: Sendable {
    enum TLSMode: String, Sendable, CaseIterable {
        case disable, prefer, require
        case verifyFull = "verify-full"
    }

    var host: String
    var port: Int
    var user: String
    /// The password written in the URL, if any.
    var urlPassword: String?
    var database: String?
    var tlsMode: TLSMode
    /// `sslrootcert`: a PEM file of the certificate authorities `verify-full` trusts.
    var rootCertificateFile: String?
    /// The URL without its password, for messages and logs.
    var displayURL: String
    /// The password that goes to the server: the one given apart, else the URL's.
    var password: String?

    /// Reads a store URL.
    /// - Throws: ``StoreError`` (`cannotOpen`) naming the URL (without its password) and what is wrong with it.
    init(url: String) throws(StoreError) {
        guard let parts = URLComponents(string: url), ["postgres", "postgresql"].contains(parts.scheme ?? ""),
            let host = parts.host, !host.isEmpty, let user = parts.user, !user.isEmpty
        else {
            var shown = URLComponents(string: url)
            shown?.password = nil
            throw StoreError(
                .cannotOpen,
                "\(shown?.string ?? "the store URL"): not a PostgreSQL URL; write postgres://USER@HOST:PORT/DATABASE")
        }
        var display = parts
        display.password = nil
        displayURL = display.string ?? "postgres://\(user)@\(host)"
        self.host = host
        port = parts.port ?? 5432
        self.user = user
        urlPassword = parts.password
        let database = String(parts.path.drop { $0 == "/" })
        self.database = database.isEmpty ? nil : database
        var tlsMode = TLSMode.disable
        var rootCertificateFile: String?
        for item in parts.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let mode = item.value.flatMap(TLSMode.init(rawValue:)) else {
                    throw StoreError(
                        .cannotOpen,
                        "\(displayURL): sslmode=\(item.value ?? "") is not one of "
                            + TLSMode.allCases.map(\.rawValue).joined(separator: ", "))
                }
                tlsMode = mode
            case "sslrootcert":
                guard let file = item.value, !file.isEmpty else {
                    throw StoreError(.cannotOpen, "\(displayURL): sslrootcert names no file")
                }
                rootCertificateFile = file
            default:
                throw StoreError(
                    .cannotOpen,
                    "\(displayURL): unknown parameter \(item.name); a store URL takes sslmode and sslrootcert")
            }
        }
        if rootCertificateFile != nil, tlsMode != .verifyFull {
            throw StoreError(
                .cannotOpen,
                "\(displayURL): sslrootcert is used by sslmode=verify-full only; add sslmode=verify-full or remove it")
        }
        self.tlsMode = tlsMode
        self.rootCertificateFile = rootCertificateFile
    }

    /// postgres-nio's TLS setting for its client (the pool) in ``tlsMode``.
    /// - Throws: ``StoreError`` when the `sslrootcert` file cannot be read as PEM certificates.
    func clientTLS() throws(StoreError) -> PostgresClient.Configuration.TLS {
        switch (tlsMode, try tlsConfiguration()) {
        case (.disable, _), (_, nil): .disable
        case (.prefer, let configuration?): .prefer(configuration)
        case (_, let configuration?): .require(configuration)
        }
    }

    /// The same for one connection (``PostgresLayoutStore`` opens one to say why the pool cannot connect).
    func connectionTLS() throws -> PostgresConnection.Configuration.TLS {
        switch (tlsMode, try tlsConfiguration()) {
        case (.disable, _), (_, nil): .disable
        case (.prefer, let configuration?): .prefer(try NIOSSLContext(configuration: configuration))
        case (_, let configuration?): .require(try NIOSSLContext(configuration: configuration))
        }
    }

    /// The TLS client configuration of ``tlsMode``; `nil` for `disable`.
    private func tlsConfiguration() throws(StoreError) -> TLSConfiguration? {
        var configuration = TLSConfiguration.makeClientConfiguration()
        switch tlsMode {
        case .disable:
            return nil
        case .prefer, .require:
            // libpq's `prefer` and `require` encrypt without checking whom they talk to.
            configuration.certificateVerification = .none
        case .verifyFull:
            configuration.certificateVerification = .fullVerification
            if let rootCertificateFile {
                let roots: [NIOSSLCertificate]
                do {
                    roots = try NIOSSLCertificate.fromPEMFile(rootCertificateFile)
                } catch {
                    throw StoreError(
                        .cannotOpen,
                        "\(displayURL): sslrootcert \(rootCertificateFile) cannot be read as PEM certificates (\(error))"
                    )
                }
                guard !roots.isEmpty else {
                    throw StoreError(
                        .cannotOpen, "\(displayURL): sslrootcert \(rootCertificateFile) holds no certificate")
                }
                configuration.trustRoots = .certificates(roots)
            }
        }
        return configuration
    }
}

/// Where the PostgreSQL password comes from, apart from the store URL: the service's command reads it from the
/// environment or a file and hands it over, so it never sits on a command line.
public struct StorePassword: Sendable, Equatable {
    public var password: String
    /// Where it was read (`PGPASSWORD`, `--store-password-file /etc/…`), for messages.
    public var source: String

    public init(_ password: String, source: String) {
        self.password = password
        self.source = source
    }

    /// The password from the first of: the file (its first line, without the line break), the environment's
    /// `FEEDLAYOUT_STORE_PASSWORD`, then libpq's `PGPASSWORD`. `nil` when none is given.
    /// - Throws: ``StoreError`` (`cannotOpen`) naming the file when it cannot be read or is empty.
    public static func find(file: String?, environment: [String: String]) throws(StoreError) -> StorePassword? {
        if let file {
            let text: String
            do {
                text = try String(contentsOfFile: file, encoding: .utf8)
            } catch {
                throw StoreError(
                    .cannotOpen,
                    "--store-password-file \(file): cannot be read (\((error as NSError).localizedDescription))")
            }
            let password = String(text.prefix { $0 != "\n" && $0 != "\r\n" && $0 != "\r" })
            guard !password.isEmpty else {
                throw StoreError(
                    .cannotOpen, "--store-password-file \(file): the first line is empty; write the password there")
            }
            return StorePassword(password, source: "--store-password-file \(file)")
        }
        for name in ["FEEDLAYOUT_STORE_PASSWORD", "PGPASSWORD"] {
            if let password = environment[name], !password.isEmpty { return StorePassword(password, source: name) }
        }
        return nil
    }
}
