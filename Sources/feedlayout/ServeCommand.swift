import ArgumentParser
import Foundation
import LayoutService
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
                """)

        @Option(help: "The address to listen on.")
        var host = "127.0.0.1"

        @Option(help: "The port to listen on (0: any free port, logged at start).")
        var port = 8080

        @Option(help: "The store of layouts, pages and the probe cache: an SQLite file, its posted feeds in the folder PATH.feeds beside it (default: $XDG_DATA_HOME/feedlayout/service.sqlite, else ~/.local/share/…), or postgres://USER[:PASSWORD]@HOST:PORT/DB shared by several instances.")
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
            guard Logger.Level(rawValue: logLevel) != nil else {
                throw ValidationError("--log-level is trace, debug, info, notice, warning, error or critical")
            }
            try validateBoundedResources()
        }

        func run() async throws {
            // Logs go to standard error, as every message of this command does (only executables bootstrap).
            LoggingSystem.bootstrap(StreamLogHandler.standardError)
            var logger = Logger(label: "feedlayout.serve")
            logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
            var settings = ServiceSettings(
                host: host, port: port, storePath: store ?? ServiceSettings.defaultStorePath(),
                allowPrivateNetwork: allowPrivateNetwork, maximumFeedBytes: maxFeedBytes,
                maximumConcurrentLayouts: maxConcurrentLayouts,
                requestTimeout: .milliseconds(Int(requestTimeout * 1000)),
                imageRoot: imageRoot.map { URL(fileURLWithPath: $0).standardizedFileURL.path })
            settings.leaseDuration = .milliseconds(Int(lease * 1000))
            applyBoundedResources(to: &settings)
            let server: LayoutServer
            do {
                server = try await LayoutServer(settings: settings, logger: logger)
            } catch {
                Terminal.error("\(error)")
                throw ExitCode(CommandLineFailure.someInputsFailed)
            }
            try await server.run()
        }
    }
}
