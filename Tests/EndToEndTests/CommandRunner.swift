import FeedLayoutTestSupport
import Foundation

/// Runs the built `feedlayout` binary, as a user would (swift-argument-parser's TestHelpers do the same).
struct CommandRunner {
    struct Output {
        var status: Int32
        var stdout: Data
        var stderr: String
        /// From the start of the command to its exit.
        var duration: Duration = .zero
        var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// The repository's root, found from this file's path.
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static let sampleFeed = repositoryRoot.appendingPathComponent("sample-feed/feed.xml").path

    /// XDG_CACHE_HOME for every command this test run starts.
    static let testCacheHome = FileManager.default.temporaryDirectory.appendingPathComponent(
        "feedlayout-e2e-cache-\(UUID().uuidString)")

    /// The binary sits beside the test bundle in the build products folder; `FEEDLAYOUT_TEST_BINARY` names another
    /// (a release build, say: the tests then run the binary users get).
    static let binary: URL = {
        if let path = ProcessInfo.processInfo.environment["FEEDLAYOUT_TEST_BINARY"], !path.isEmpty {
            return URL(fileURLWithPath: path).standardizedFileURL
        }
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var folder = executable.deletingLastPathComponent()
        // Swift Testing may run from inside the .xctest bundle folder on some layouts.
        while !FileManager.default.fileExists(atPath: folder.appendingPathComponent("feedlayout").path), folder.path != "/" {
            folder = folder.deletingLastPathComponent()
        }
        return folder.appendingPathComponent("feedlayout")
    }()

    /// - Parameter timeout: Seconds after which the command is killed (status `SIGKILL`, as `terminationStatus`
    ///   reports it), for commands that could hang; `nil` waits for as long as it takes.
    static func run(
        _ arguments: [String], stdin: Data? = nil, environment: [String: String] = [:], timeout: Double? = nil
    ) async throws -> Output {
        try await runTool(binary.path, arguments, stdin: stdin, environment: environment, timeout: timeout)
    }

    /// Runs any program (a script of the repository, say) the same way, waiting on a thread of its own.
    ///
    /// Commands are not queued: a queue shared by the suites would count its wait against each suite's time limit,
    /// and make a test that holds a server's answer back meanwhile wait behind other suites' layouts.
    static func runTool(
        _ path: String, _ arguments: [String], stdin: Data? = nil, environment: [String: String] = [:],
        timeout: Double? = nil
    ) async throws -> Output {
        try await onOwnThread {
            try runBlocking(path, arguments, stdin: stdin, environment: environment, timeout: timeout)
        }
    }

    private static func runBlocking(
        _ path: String, _ arguments: [String], stdin: Data?, environment extra: [String: String], timeout: Double?
    ) throws -> Output {
        // The probe cache goes to a folder of this test run, never the user's own cache.
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CACHE_HOME"] = testCacheHome.path
        environment.merge(extra) { _, new in new }
        // stderr goes to a file, so only one pipe needs draining while the child runs.
        let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("feedlayout-stderr-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: errorFile) }
        let started = ContinuousClock.now
        let result = try ChildProcess.run(
            path, arguments, environment: environment, directory: repositoryRoot.path, stdin: stdin,
            stderrPath: errorFile.path, timeout: timeout)
        let duration = ContinuousClock.now - started
        let stderrData = (try? Data(contentsOf: errorFile)) ?? Data()
        return Output(
            status: result.status, stdout: result.stdout, stderr: String(decoding: stderrData, as: UTF8.self),
            duration: duration)
    }

    /// A copy of the sample feed, in a folder of its own, with FeedLayout's namespace declared (prefix `fl`) and
    /// `extraElements(index)` put at the start of each item that gets any. Relative photo paths resolve next to the
    /// copy, through a link to the sample's photos (allowed with `--image-root` set to the sample's folder).
    static func sampleFeedCopy(extraElements: (Int) -> String?) throws -> String {
        let directory = try temporaryDirectory()
        var text = try String(contentsOfFile: sampleFeed, encoding: .utf8)
        text = text.replacingOccurrences(of: "<rss version=\"2.0\"", with: "<rss version=\"2.0\" xmlns:fl=\"urn:feedlayout:1\"")
        var parts = text.components(separatedBy: "<item>")
        for index in 1..<parts.count {
            if let elements = extraElements(index - 1) { parts[index] = elements + parts[index] }
        }
        let path = directory.appendingPathComponent("feed.xml").path
        try parts.joined(separator: "<item>").write(toFile: path, atomically: true, encoding: .utf8)
        let photos = URL(fileURLWithPath: sampleFeed).deletingLastPathComponent().appendingPathComponent("photos")
        try FileManager.default.createSymbolicLink(
            atPath: directory.appendingPathComponent("photos").path, withDestinationPath: photos.path)
        return path
    }

    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("feedlayout-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

/// A page file read back as plain JSON.
struct PageFile {
    let json: [String: Any]

    init(_ data: Data) throws {
        json = try JSONSerialization.jsonObject(with: data) as! [String: Any]
    }

    var items: [[String: Any]] { json["items"] as! [[String: Any]] }
    var cursor: String? { json["cursor"] as? String }
    var layout: [String: Any] { json["layout"] as! [String: Any] }

    static func readAll(in directory: URL) throws -> [PageFile] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("page-") }.sorted()
        return try names.map { try PageFile(Data(contentsOf: directory.appendingPathComponent($0))) }
    }
}

/// A frame read back from JSON.
struct Frame: Equatable {
    var x, y, width, height: Double

    init(_ object: Any?) {
        let dictionary = object as! [String: Any]
        x = (dictionary["x"] as! NSNumber).doubleValue
        y = (dictionary["y"] as! NSNumber).doubleValue
        width = (dictionary["width"] as! NSNumber).doubleValue
        height = (dictionary["height"] as! NSNumber).doubleValue
    }

    var maxX: Double { x + width }
    var maxY: Double { y + height }

    func overlaps(_ other: Frame) -> Bool {
        x < other.maxX && other.x < maxX && y < other.maxY && other.y < maxY
    }
}

/// A JSON number as a Double; NaN (which fails every comparison) when the value is missing or not a number.
func number(_ object: Any?) -> Double { (object as? NSNumber)?.doubleValue ?? .nan }
