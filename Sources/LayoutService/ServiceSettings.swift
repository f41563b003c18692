import Foundation
import LayoutStore

/// How `feedlayout serve` runs: where it listens, where it keeps layouts, and its limits.
public struct ServiceSettings: Sendable {
    /// The address to listen on; loopback by default, so nothing is exposed until asked.
    public var host: String
    /// The port; 0 picks a free one (its number is logged and given to `onListening`).
    public var port: Int
    /// The store: an SQLite file (layouts, pages and the probe cache), or a `postgres://` URL shared by several
    /// instances (layouts and pages; each machine keeps its probe cache in its own cache folder).
    public var storePath: String
    /// With a shared store: how long a layout stays with an instance that stopped renewing its lease (killed, cut
    /// off) before another takes it over.
    public var leaseDuration: Duration = .seconds(30)
    /// Whether feeds and photos at private, loopback and link-local addresses may be fetched.
    public var allowPrivateNetwork: Bool
    /// The largest request body and the largest feed, in bytes (413 beyond).
    public var maximumFeedBytes: Int
    /// How many layouts are computed at once; the others wait in order.
    public var maximumConcurrentLayouts: Int
    /// How long a client may take to send a whole request, head and body, once it has begun (a client that sends
    /// a byte a second is cut off here), and how long a kept-alive connection may stay idle.
    public var requestTimeout: Duration
    /// The most a page request may wait for a page still being made (`?wait=`).
    public var maximumWait: Int
    /// Threads for layout work; default: one per core.
    public var layoutThreads: Int
    /// How long a feed's or photo's server may stay silent (no bytes) before the fetch fails.
    public var feedReadTimeout: Duration = .seconds(10)
    /// How long a photo may take in all, and a feed's server until its response head.
    public var feedTotalTimeout: Duration = .seconds(30)
    /// A folder of photos that posted feeds may reference by relative path (`--image-root`): they are read from
    /// it for layouts and served under `/files/` for clients. `nil`: posted feeds never name a local file.
    public var imageRoot: String?
    /// The most pins one viewport query answers with: a rectangle over a whole large layout would read every
    /// page of it for one request.
    public var maximumItemsPerQuery = 2_000

    // MARK: Access (see RequestRules)

    /// The keys requests may carry (`--api-keys`); nil or empty: no key is asked for.
    public var apiKeys: APIKeys?
    /// Whether the `/v1/` reads need a key with `read` too (pages are public by default: immutable, made for CDNs).
    public var privateReads = false
    /// Origins whose pages may read the read routes (`--cors-origin`, `*` for any).
    public var corsOrigins: [String] = []
    /// How each client's creations are bounded: a token bucket and a bound on its queued layouts.
    public var creationsPerMinute: Double = 120
    public var creationBurst = 60
    public var maximumQueuedLayouts = 64
    /// Where the access log goes: `-` for standard error, a file, or nil for none.
    public var accessLog: String? = "-"
    /// How log lines are written.
    public var logFormat: LogFormat = .text

    // MARK: Keeping the store within bounds

    /// `--max-store-bytes`: past this many bytes (the layouts' sizes as `GET /v1/layouts` gives them), the least
    /// recently read layouts that are not being computed are removed, whole, until the store is within it; `nil`:
    /// no bound.
    public var maximumStoreBytes: Int?
    /// `--keep-days`: a layout not read for this long (or, never read, created this long ago) is removed; `nil`:
    /// kept for good.
    public var keepDuration: Duration?
    /// How often the layouts' reads are written to the store and the bounds above are applied.
    public var storeCheckInterval: Duration = .seconds(60)
    /// The clock of last-read times, ages and the store checks (tests pass one they move by hand).
    public var clock: any ServiceClock = SystemServiceClock()

    // MARK: Operations: the store's password

    /// The PostgreSQL store's password, from the environment or a file (never from the command line); it wins over
    /// a password in the store URL. `nil`: none, or the URL's.
    public var storePassword: StorePassword?

    // MARK: Bounded resources (memory, connections, items)

    /// The bytes of request bodies (and of feeds fetched for them) held in memory at once, across all connections
    /// (`--max-upload-bytes-in-flight`): beyond it a post waits (``uploadWaitLimit``), then is answered `503` with
    /// `Retry-After`. A post is in memory about four times over at its peak (body, JSON decoding, decoded text,
    /// feed bytes), so the default, 128 MiB, keeps uploads under about 512 MiB.
    public var maximumUploadBytesInFlight = 128 * 1024 * 1024
    /// The most connections open at once (`--max-connections`); one more is answered `503` and closed.
    public var maximumConnections = 10_000
    /// The most items a layout lays out (`--max-items`); `nil`: no bound but the feed's size. A layout stops at the
    /// end of the page that holds its last allowed item, `done` with a `truncated` warning.
    public var maximumItems: Int?

    // MARK: Feed subscriptions (POST /v1/feeds)

    /// `--min-refresh`: the least time between two fetches of a subscription's feed, in seconds, whatever the
    /// subscription or the feed asks for.
    public var minimumRefreshSeconds = 60
    /// How often an idle event stream (`GET /v1/feeds/{id}/events`) sends a keep-alive comment.
    public var eventKeepAlive: Duration = .seconds(15)
    /// The clock subscriptions are refreshed by; `nil`: ``clock`` (tests pass one of its own, so the refresher's
    /// sleeps are told apart from the store checks').
    public var refreshClock: (any ServiceClock)?

    /// How long a post waits for room in the upload budget before it is refused: a third of the request timeout (its
    /// body is not read meanwhile, and the request deadline runs), at most 10 s.
    public var uploadWaitLimit: Duration { min(.seconds(10), requestTimeout / 3) }

    public init(
        host: String = "127.0.0.1", port: Int = 8080, storePath: String = ServiceSettings.defaultStorePath(),
        allowPrivateNetwork: Bool = false, maximumFeedBytes: Int = 64 * 1024 * 1024, maximumConcurrentLayouts: Int = 2,
        requestTimeout: Duration = .seconds(30), maximumWait: Int = 60,
        layoutThreads: Int = ProcessInfo.processInfo.activeProcessorCount, imageRoot: String? = nil
    ) {
        self.imageRoot = imageRoot
        self.host = host
        self.port = port
        self.storePath = storePath
        self.allowPrivateNetwork = allowPrivateNetwork
        self.maximumFeedBytes = maximumFeedBytes
        self.maximumConcurrentLayouts = max(1, maximumConcurrentLayouts)
        self.requestTimeout = requestTimeout
        self.maximumWait = maximumWait
        self.layoutThreads = max(1, layoutThreads)
    }

    /// Whether `host` is a loopback address (`127.0.0.0/8`, `::1`, `localhost`): only there may the service run
    /// without keys unless told so.
    public static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host == "::1" || host == "[::1]" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// `$XDG_DATA_HOME/feedlayout/service.sqlite`, else `~/.local/share/feedlayout/service.sqlite`.
    public static func defaultStorePath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let base = environment["XDG_DATA_HOME"], base.hasPrefix("/") { return base + "/feedlayout/service.sqlite" }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share/feedlayout/service.sqlite"
    }
}
