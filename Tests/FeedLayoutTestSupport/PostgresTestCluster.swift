import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A PostgreSQL database a test keeps a store in: a cluster's own `feedlayout`, or a database of the shared cluster.
public protocol PostgresTestStore: Sendable {
    var port: Int { get }
    /// The database's name.
    var database: String { get }
    /// The store URL of the database.
    var url: String { get }
}

/// A throwaway PostgreSQL cluster in a temporary folder, on a free port of 127.0.0.1: scripts/postgres-cluster
/// (Debian's postgresql, run as the postgres user). For the tests of what `feedlayout serve` instances share.
public final class PostgresTestCluster: PostgresTestStore {
    public let folder: URL
    public let port: Int
    public var database: String { "feedlayout" }
    /// The store URL of its database `feedlayout`.
    public var url: String { "postgres://postgres@127.0.0.1:\(port)/feedlayout" }
    /// Clusters alive at once, across the whole suite (see ``TestSlots``): a test's cluster waits for one.
    static let slots = TestSlots(limit: 3)
    private let holdsSlot = Atomic<Bool>(true)
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/postgres-cluster").path

    /// Creates the cluster and starts it.
    public init() async throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("feedlayout-pg-\(UUID().uuidString)")
        await Self.slots.acquire()
        do {
            port = try Self.freePort()
        } catch {
            await Self.slots.release()
            throw error
        }
        do {
            try await start()
        } catch {
            // Whole now: its deinit runs too, and must not give the slot back a second time.
            if holdsSlot.exchange(false, ordering: .relaxed) { await Self.slots.release() }
            throw error
        }
    }

    deinit {
        // A test that forgot remove(): its slot is not lost.
        if holdsSlot.exchange(false, ordering: .relaxed) { Task { await Self.slots.release() } }
    }

    public func start() async throws {
        let started = try await Self.run(["start", folder.path, "\(port)"])
        guard started.status == 0, started.stdout.hasPrefix(url) else {
            throw TestInputError(message: "PostgreSQL did not start: \(started.stderr)")
        }
    }

    public func stop() async throws {
        let stopped = try await Self.run(["stop", folder.path])
        guard stopped.status == 0 else { throw TestInputError(message: "PostgreSQL did not stop: \(stopped.stderr)") }
    }

    /// Turns TLS on with this certificate and key (PEM files), gives the `postgres` user `password`, and accepts
    /// TCP connections only over TLS with that password (`hostssl`, `scram-sha-256`); the server keeps running.
    public func requireTLS(certificate: String, key: String, password: String) async throws {
        let secured = try await Self.run(["tls", folder.path, certificate, key, password])
        guard secured.status == 0 else { throw TestInputError(message: "PostgreSQL TLS: \(secured.stderr)") }
    }

    /// Runs `body` with a started cluster and removes it before returning, whether `body` throws or not (a task
    /// left to remove it may not run before the test process ends).
    public static func with<Result>(_ body: (PostgresTestCluster) async throws -> Result) async throws -> Result {
        let cluster = try await PostgresTestCluster()
        do {
            let result = try await body(cluster)
            await cluster.remove()
            return result
        } catch {
            await cluster.remove()
            throw error
        }
    }

    /// Stops the server if it runs and deletes its folder.
    public func remove() async {
        _ = try? await Self.run(["remove", folder.path])
        if holdsSlot.exchange(false, ordering: .relaxed) { await Self.slots.release() }
    }

    /// A port nothing listens on now: the kernel's pick for a socket bound to port 0.
    public static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else { throw TestInputError(message: "no free port: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Runs the script on a thread of its own (starting a cluster takes seconds), killed after two minutes.
    static func run(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await onOwnThread {
            let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent(
                "feedlayout-pg-stderr-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: errorFile) }
            let result = try ChildProcess.run(
                script, arguments, environment: ProcessInfo.processInfo.environment, directory: nil, stdin: nil,
                stderrPath: errorFile.path, timeout: 120)
            let stderr = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
            return (result.status, String(decoding: result.stdout, as: UTF8.self), stderr)
        }
    }
}

/// A database of its own on the PostgreSQL cluster the whole test process shares (started at its first use, removed
/// when the process exits): for tests that need a store, not a server of their own to stop, secure or kill. A
/// database is made in a fraction of a second; a cluster of its own per test took seconds, and under the whole
/// suite's load tests queued for the cluster slots for minutes.
public struct PostgresTestDatabase: PostgresTestStore {
    public let port: Int
    public let database: String
    public var url: String { "postgres://postgres@127.0.0.1:\(port)/\(database)" }

    /// Runs `body` with a new empty database, dropped afterwards (its connections closed), whether `body` throws or
    /// not.
    public static func with<Result>(_ body: (PostgresTestDatabase) async throws -> Result) async throws -> Result {
        let cluster = try await SharedPostgresCluster.shared.cluster()
        let name = "t" + UUID().uuidString.lowercased().filter { $0 != "-" }
        let made = try await PostgresTestCluster.run(["database", cluster.folder.path, name])
        guard made.status == 0 else { throw TestInputError(message: "no database \(name): \(made.stderr)") }
        let database = PostgresTestDatabase(port: cluster.port, database: name)
        do {
            let result = try await body(database)
            _ = try? await PostgresTestCluster.run(["drop", cluster.folder.path, name])
            return result
        } catch {
            _ = try? await PostgresTestCluster.run(["drop", cluster.folder.path, name])
            throw error
        }
    }
}

/// The cluster ``PostgresTestDatabase`` makes its databases on: one per test process.
actor SharedPostgresCluster {
    static let shared = SharedPostgresCluster()
    private var starting: Task<PostgresTestCluster, any Error>?
    /// Its folder, for the removal at exit (a C function pointer captures nothing).
    private nonisolated static let folderAtExit = Mutex<String?>(nil)

    func cluster() async throws -> PostgresTestCluster {
        if let starting, let cluster = try? await starting.value { return cluster }
        let task = Task { try await PostgresTestCluster() }
        starting = task
        let cluster = try await task.value
        Self.folderAtExit.withLock { $0 = cluster.folder.path }
        atexit {
            guard let folder = SharedPostgresCluster.folderAtExit.withLock({ $0 }) else { return }
            _ = try? ChildProcess.run(
                PostgresTestCluster.script, ["remove", folder], environment: ProcessInfo.processInfo.environment,
                directory: nil, stdin: nil, stderrPath: "/dev/null", timeout: 60)
        }
        return cluster
    }
}
