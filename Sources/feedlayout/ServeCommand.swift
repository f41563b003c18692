import ArgumentParser
import Foundation
import LayoutService
import LayoutStore
import Logging

extension FeedLayoutCommand {
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "serve",
            abstract: "Serve layouts over HTTP: post a feed, get its pages by index, by cursor or by viewport.",
            discussion: """
                Layouts are computed once and kept in the store (an SQLite file, with the probe cache; or \
                PostgreSQL, shared by several instances); pages are the bytes feedlayout layout writes, served with \
                strong ETags, gzip and immutable caching. A layout cut short by a crash or a shutdown is finished at \
                the next start, or with PostgreSQL by another instance once its lease expires. SIGTERM or SIGINT \
                stops the service gracefully (exit 0). The routes and their JSON are in \
                schemas/feedlayout-service.openapi.yaml.

                Examples:
                  feedlayout serve --port 8080 --store /var/lib/feedlayout/service.sqlite
                  feedlayout serve --port 8081 --store postgres://feedlayout@127.0.0.1:5432/feedlayout
                  curl -s localhost:8080/v1/layouts -d '{"feed": "https://example.org/feed.xml", \\
                    "options": {"width": 375, "columns": 2}}'
                  open http://127.0.0.1:8080/ (the web client: post a feed, see its layout)
                  FEEDLAYOUT_API_KEYS=/etc/feedlayout/keys feedlayout serve --host 0.0.0.0

                Every option can also come from the environment (FEEDLAYOUT_ and its name in capitals, dashes as \
                underscores: FEEDLAYOUT_MAX_FEED_BYTES) or from a configuration file of `name = value` lines \
                (--config FILE or FEEDLAYOUT_CONFIG); the command line wins over the environment, and the \
                environment over the file.
                """)

        @Option(help: "The address to listen on.")
        var host = "127.0.0.1"

        @Option(help: "The port to listen on (0: any free port, logged at start).")
        var port = 8080

        @Option(help: "The store of layouts, pages and the probe cache: an SQLite file, its posted feeds in the folder PATH.feeds beside it (default: $XDG_DATA_HOME/feedlayout/service.sqlite, else ~/.local/share/…), or postgres://USER@HOST:PORT/DB[?sslmode=disable|prefer|require|verify-full&sslrootcert=FILE] shared by several instances.")
        var store: String?

        @Option(help: "With a PostgreSQL store: seconds a layout stays with an instance that stopped renewing its lease, before another takes it over.")
        var lease = 30.0

        @Flag(help: "Also fetch feeds and photos from private, loopback and link-local addresses (refused by default).")
        var allowPrivateNetwork = false

        @Option(help: ArgumentHelp(
            "A folder of photos that posted feeds may name by relative path; served under /files/ for the web client.",
            valueName: "dir"))
        var imageRoot: String?

        @Option(help: "The largest feed (and request body) accepted, in bytes.")
        var maxFeedBytes = 64 * 1024 * 1024

        @Option(help: "How many layouts are computed at once; the others wait in order.")
        var maxConcurrentLayouts = 2

        @Option(help: "Seconds a client may take to send a whole request (and a connection may stay idle).")
        var requestTimeout = 30.0

        @Option(help: "Log level: trace, debug, info, notice, warning, error or critical.")
        var logLevel = "info"

        @Option(help: "A configuration file of `name = value` lines (the options' long names), read before the environment and the command line.")
        var config: String?

        // MARK: Access

        @Option(help: ArgumentHelp(
            "The keys file: one key a line, NAME:SCOPES:SHA256HEX (scopes read, write, admin; the hex SHA-256 of the token, e.g. printf %s TOKEN | sha256sum). Writes then need a key with write; see --private-reads.",
            valueName: "file"))
        var apiKeys: String?

        @Flag(help: "With --api-keys: the /v1/ reads need a key with read too (pages are public by default: immutable, made for CDNs).")
        var privateReads = false

        @Flag(help: "Serve without keys on a non-loopback --host, on purpose (anyone who reaches the port may post feeds).")
        var noAuth = false

        @Option(help: ArgumentHelp(
            "An origin whose pages may read the read routes (https://app.example.org; * for any); repeatable.",
            valueName: "origin"))
        var corsOrigin: [String] = []

        @Option(help: "Layouts a client (its key, else its address) may create a minute, refilled evenly (0: no rate limit); 429 beyond.")
        var creationsPerMinute = 120.0

        @Option(help: "Layouts a client may create at once before --creations-per-minute applies.")
        var creationBurst = 60

        @Option(help: "Layouts of one client queued or running at once (0: no bound); 503 beyond.")
        var maxQueuedLayouts = 64

        @Option(help: ArgumentHelp(
            "Where the access log goes, a line per request: - (standard error), a file (appended to), or off.",
            valueName: "file"))
        var accessLog = "-"

        @Option(help: "How log lines are written: text or json.")
        var logFormat = "text"

        // MARK: Keeping the store within bounds

        @Option(help: ArgumentHelp(
            "Remove the least recently read layouts (never one being computed) while the store holds more than this many bytes of layouts (feeds, gzipped pages, pins; as GET /v1/layouts sizes them). Default: no bound.",
            valueName: "bytes"))
        var maxStoreBytes: Int?

        @Option(help: ArgumentHelp(
            "Remove layouts not read for this many days (never read: created that long ago), unless being computed. Default: kept for good.",
            valueName: "days"))
        var keepDays: Double?

        // MARK: Operations: the PostgreSQL store's password

        @Option(help: ArgumentHelp(
            "With a PostgreSQL store: a file whose first line is its password (else FEEDLAYOUT_STORE_PASSWORD, else PGPASSWORD, from the environment; a password in the URL works but is visible in ps).",
            valueName: "file"))
        var storePasswordFile: String?

        // MARK: Bounded resources (memory, connections, items)

        @Option(help: ArgumentHelp(
            "Request bodies (and feeds fetched for them) held in memory at once, in bytes; a post beyond it waits up to a third of --request-timeout (at most 10 s), then gets 503 with Retry-After.",
            valueName: "bytes"))
        var maxUploadBytesInFlight = 128 * 1024 * 1024

        @Option(help: "Connections open at once; one more is answered 503 and closed (lowered, with a warning, to what the open-file limit allows).")
        var maxConnections = 10_000

        @Option(help: "Items a layout lays out at most; it then ends done with a `truncated` warning (default: no bound but --max-feed-bytes).")
        var maxItems: Int?

        func validateBoundedResources() throws {
            guard (1...(1 << 40)).contains(maxUploadBytesInFlight) else {
                throw ValidationError("--max-upload-bytes-in-flight is from 1 to 1099511627776")
            }
            guard (1...1_000_000).contains(maxConnections) else {
                throw ValidationError("--max-connections is from 1 to 1000000")
            }
            if let maxItems, !(1...100_000_000).contains(maxItems) {
                throw ValidationError("--max-items is from 1 to 100000000")
            }
        }

        func applyBoundedResources(to settings: inout ServiceSettings) {
            settings.maximumUploadBytesInFlight = maxUploadBytesInFlight
            settings.maximumConnections = maxConnections
            settings.maximumItems = maxItems
        }

        // MARK: Feed subscriptions

        @Option(help: ArgumentHelp(
            "The least time between two fetches of a subscribed feed (POST /v1/feeds), whatever the subscription or the feed asks for.",
            valueName: "seconds"))
        var minRefresh = 60

        func validateSubscriptions() throws {
            guard (1...86_400).contains(minRefresh) else { throw ValidationError("--min-refresh is from 1 to 86400 seconds") }
        }

        func applySubscriptions(to settings: inout ServiceSettings) {
            settings.minimumRefreshSeconds = minRefresh
        }

        func validate() throws {
            guard (0...65535).contains(port) else { throw ValidationError("--port is from 0 to 65535") }
            guard (1...(1 << 34)).contains(maxFeedBytes) else {
                throw ValidationError("--max-feed-bytes is from 1 to 17179869184")
            }
            guard (1...64).contains(maxConcurrentLayouts) else {
                throw ValidationError("--max-concurrent-layouts is from 1 to 64")
            }
            guard lease.isFinite, (1...3600).contains(lease) else {
                throw ValidationError("--lease is from 1 to 3600 seconds")
            }
            guard requestTimeout.isFinite, (0.1...3600).contains(requestTimeout) else {
                throw ValidationError("--request-timeout is from 0.1 to 3600 seconds")
            }
            if let imageRoot {
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: imageRoot, isDirectory: &isFolder), isFolder.boolValue else {
                    throw ValidationError("--image-root \(imageRoot): no such folder")
                }
            }
            if let maxStoreBytes, maxStoreBytes < 1 {
                throw ValidationError("--max-store-bytes is a number of bytes from 1 (got \(maxStoreBytes))")
            }
            if let keepDays, !(keepDays.isFinite && keepDays > 0 && keepDays <= 36_500) {
                throw ValidationError("--keep-days is a number of days above 0, at most 36500 (got \(keepDays))")
            }
            guard Logger.Level(rawValue: logLevel) != nil else {
                throw ValidationError("--log-level is trace, debug, info, notice, warning, error or critical")
            }
            guard LogFormat(rawValue: logFormat) != nil else { throw ValidationError("--log-format is text or json") }
            guard creationsPerMinute.isFinite, creationsPerMinute >= 0, (1...100_000).contains(creationBurst),
                maxQueuedLayouts >= 0
            else {
                throw ValidationError(
                    "--creations-per-minute is 0 or more, --creation-burst from 1 to 100000, --max-queued-layouts 0 or more")
            }
            for origin in corsOrigin where origin != "*" {
                guard let url = URL(string: origin), let scheme = url.scheme, ["http", "https"].contains(scheme),
                    url.host != nil, url.path.isEmpty, url.query == nil
                else {
                    throw ValidationError("--cors-origin \(origin): an origin is scheme://host[:port], or *")
                }
            }
            if apiKeys == nil, !noAuth, !ServiceSettings.isLoopback(host) {
                throw ValidationError(
                    """
                    --host \(host) is not a loopback address, and the service has no keys: anyone who reaches it could \
                    post feeds. Give it keys (--api-keys FILE or FEEDLAYOUT_API_KEYS; a line NAME:read,write:SHA256HEX, \
                    the hex SHA-256 of a token: printf %s TOKEN | sha256sum), or pass --no-auth to serve without keys \
                    on purpose.
                    """)
            }
            if apiKeys != nil, noAuth { throw ValidationError("--api-keys and --no-auth contradict each other") }
            if privateReads, apiKeys == nil { throw ValidationError("--private-reads needs --api-keys") }
            try validateBoundedResources()
            try validateSubscriptions()
        }

        func run() async throws {
            // Logs go to standard error, as every message of this command does (only executables bootstrap).
            let format = LogFormat(rawValue: logFormat) ?? .text
            switch format {
            case .text: LoggingSystem.bootstrap(StreamLogHandler.standardError)
            case .json: LoggingSystem.bootstrap(JSONLogHandler.init)
            }
            var logger = Logger(label: "feedlayout.serve")
            logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
            var settings = ServiceSettings(
                host: host, port: port, storePath: store ?? ServiceSettings.defaultStorePath(),
                allowPrivateNetwork: allowPrivateNetwork, maximumFeedBytes: maxFeedBytes,
                maximumConcurrentLayouts: maxConcurrentLayouts,
                requestTimeout: .milliseconds(Int(requestTimeout * 1000)),
                imageRoot: imageRoot.map { URL(fileURLWithPath: $0).standardizedFileURL.path })
            settings.leaseDuration = .milliseconds(Int(lease * 1000))
            settings.privateReads = privateReads
            settings.corsOrigins = corsOrigin
            settings.creationsPerMinute = creationsPerMinute
            settings.creationBurst = creationBurst
            settings.maximumQueuedLayouts = maxQueuedLayouts
            settings.accessLog = accessLog == "off" ? nil : accessLog
            settings.logFormat = format
            settings.maximumStoreBytes = maxStoreBytes
            settings.keepDuration = keepDays.map { Duration.seconds($0 * 86_400) }
            applyBoundedResources(to: &settings)
            applySubscriptions(to: &settings)
            let server: LayoutServer
            do {
                if let apiKeys { settings.apiKeys = try APIKeys(contentsOfFile: apiKeys) }
                settings.storePassword = try StorePassword.find(
                    file: storePasswordFile, environment: ProcessInfo.processInfo.environment)
                server = try await LayoutServer(settings: settings, logger: logger)
            } catch {
                Terminal.error("\(error)")
                throw ExitCode(CommandLineFailure.someInputsFailed)
            }
            try await server.run()
        }
    }
}
