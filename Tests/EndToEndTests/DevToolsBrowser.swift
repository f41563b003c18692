import FeedLayoutTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Headless Chromium (Debian's chromium package) driven through the DevTools protocol over a pipe
/// (`--remote-debugging-pipe`): commands go to the browser's file descriptor 3, answers and events come from its
/// descriptor 4, each message a JSON object ended by a NUL byte. No WebSocket and no port: nothing else can talk
/// to the browser, and nothing is left listening when a test fails. Waits for the browser happen on a thread of
/// their own (``onOwnThread(_:)``), never on the cooperative pool the other suites need.
final class DevToolsBrowser {
    struct ProtocolError: Error, CustomStringConvertible {
        var description: String
    }

    private let process: pid_t
    private let commands: Int32
    private let answers: Int32
    private let profile: URL
    private var received: [UInt8] = []
    private var lastID = 0
    /// Every event so far, in order of arrival (`method`, `params`, `sessionId`).
    private(set) var events: [[String: Any]] = []

    init() throws {
        profile = try CommandRunner.temporaryDirectory()
        var toBrowser: [Int32] = [-1, -1]
        var fromBrowser: [Int32] = [-1, -1]
        guard pipe(&toBrowser) == 0, pipe(&fromBrowser) == 0 else {
            throw ProtocolError(description: "pipe: \(String(cString: strerror(errno)))")
        }
        // Every end moved above 10 (close-on-exec), so that the copies made at 3 and 4 never overwrite one another.
        func movedHigh(_ descriptor: Int32) -> Int32 {
            let high = fcntl(descriptor, F_DUPFD_CLOEXEC, 10)
            Glibc.close(descriptor)
            return high
        }
        toBrowser = toBrowser.map(movedHigh)
        fromBrowser = fromBrowser.map(movedHigh)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // The pipes' ends are close-on-exec; the copies made at 3 and 4 are not, so the browser keeps only those.
        posix_spawn_file_actions_adddup2(&actions, toBrowser[0], 3)
        posix_spawn_file_actions_adddup2(&actions, fromBrowser[1], 4)
        // The browser's own log (D-Bus and GPU complaints of a machine without a desktop) goes to its profile folder.
        posix_spawn_file_actions_addopen(
            &actions, 2, profile.appendingPathComponent("chromium.log").path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        ChildProcess.closeInheritedDescriptors(from: 5, in: &actions)
        let arguments = [
            "/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu", "--force-device-scale-factor=1",
            "--remote-debugging-pipe", "--user-data-dir=\(profile.path)", "--no-first-run", "--mute-audio",
            "about:blank",
        ]
        var argv = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, arguments[0], &actions, nil, &argv, environ)
        close(toBrowser[0])
        close(fromBrowser[1])
        guard status == 0 else {
            close(toBrowser[1])
            close(fromBrowser[0])
            throw ProtocolError(description: "cannot start \(arguments[0]): \(String(cString: strerror(status)))")
        }
        process = pid
        commands = toBrowser[1]
        answers = fromBrowser[0]
    }

    deinit {
        kill(process, SIGKILL)
        var status: Int32 = 0
        waitpid(process, &status, 0)
        close(commands)
        close(answers)
        try? FileManager.default.removeItem(at: profile)
    }

    /// Asks the browser to close, without waiting (it is killed when this object goes, whatever it answered).
    func quit() {
        lastID += 1
        _ = try? write(["id": lastID, "method": "Browser.close"])
    }

    private func write(_ message: [String: Any]) throws {
        var bytes = [UInt8](try JSONSerialization.data(withJSONObject: message))
        bytes.append(0)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Glibc.write(commands, $0.baseAddress, $0.count) }
            guard count > 0 else {
                throw ProtocolError(description: "the browser closed its pipe (\(message["method"] ?? ""))")
            }
            written += count
        }
    }

    /// Sends a command and waits for its answer; events that arrive meanwhile are kept in ``events``.
    /// - Throws: `ProtocolError` with the browser's error, or when no answer comes within `timeout` seconds.
    @discardableResult
    func send(_ method: String, _ parameters: [String: Any] = [:], session: String? = nil, timeout: Double = 60)
        async throws -> [String: Any]
    {
        lastID += 1
        let id = lastID
        var message: [String: Any] = ["id": id, "method": method, "params": parameters]
        if let session { message["sessionId"] = session }
        try write(message)
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let answer = try await nextMessage(until: deadline, waitingFor: method)
            if answer["id"] as? Int == id {
                if let error = answer["error"] as? [String: Any] {
                    throw ProtocolError(description: "\(method): \(error["message"] ?? error)")
                }
                return answer["result"] as? [String: Any] ?? [:]
            }
            if answer["method"] != nil { events.append(answer) }
        }
    }

    private func nextMessage(until deadline: Date, waitingFor method: String) async throws -> [String: Any] {
        while true {
            if let end = received.firstIndex(of: 0) {
                let message = Array(received[..<end])
                received.removeSubrange(...end)
                guard let object = try JSONSerialization.jsonObject(with: Data(message)) as? [String: Any] else {
                    throw ProtocolError(description: "the browser sent something other than a JSON object")
                }
                return object
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw ProtocolError(description: "no answer to \(method) in time") }
            let descriptor = answers
            @Sendable func readable(within milliseconds: Int32) -> Bool {
                var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                return poll(&poller, 1, milliseconds) > 0 && poller.revents != 0
            }
            guard readable(within: 0) else {
                _ = try await onOwnThread { readable(within: Int32(min(remaining, 1) * 1000)) }
                continue
            }
            var chunk = [UInt8](repeating: 0, count: 1 << 20)
            let count = chunk.withUnsafeMutableBytes { read(answers, $0.baseAddress, $0.count) }
            guard count > 0 else { throw ProtocolError(description: "the browser exited (waiting for \(method))") }
            received += chunk[..<count]
        }
    }

    /// Navigates the tab and waits for the new document's `load` event.
    func navigate(_ session: String, to url: String, timeout: Double = 60) async throws {
        let seen = events.count
        try await send("Page.navigate", ["url": url], session: session)
        let deadline = Date().addingTimeInterval(timeout)
        while !events[seen...].contains(where: { $0["method"] as? String == "Page.loadEventFired" }) {
            let message = try await nextMessage(until: deadline, waitingFor: "the load of \(url)")
            if message["method"] != nil { events.append(message) }
        }
    }

    /// A new tab of `width` × `height` CSS pixels at scale 1, with the page, network, runtime and log events on;
    /// `script` runs in every document it loads, before the document's own scripts.
    func openTab(width: Int, height: Int, script: String) async throws -> String {
        let target = try await send("Target.createTarget", ["url": "about:blank"])
        guard let targetID = target["targetId"] as? String else { throw ProtocolError(description: "no target id") }
        let attached = try await send("Target.attachToTarget", ["targetId": targetID, "flatten": true])
        guard let session = attached["sessionId"] as? String else { throw ProtocolError(description: "no session") }
        for domain in ["Page", "Network", "Runtime", "Log"] { try await send("\(domain).enable", session: session) }
        try await resize(session, width: width, height: height)
        try await send("Page.addScriptToEvaluateOnNewDocument", ["source": script], session: session)
        return session
    }

    func resize(_ session: String, width: Int, height: Int) async throws {
        try await send(
            "Emulation.setDeviceMetricsOverride",
            ["width": width, "height": height, "deviceScaleFactor": 1, "mobile": false], session: session)
    }

    /// Evaluates an expression in the page, waiting for the promise it gives, and returns its value as JSON
    /// values (`[Any]`, `[String: Any]`, `NSNumber`, `String`).
    /// - Throws: `ProtocolError` with the page's exception.
    func evaluate(_ expression: String, in session: String, timeout: Double = 60) async throws -> Any? {
        let result = try await send(
            "Runtime.evaluate", ["expression": expression, "awaitPromise": true, "returnByValue": true],
            session: session, timeout: timeout)
        if let exception = result["exceptionDetails"] as? [String: Any] {
            let description = (exception["exception"] as? [String: Any])?["description"] ?? exception["text"] ?? ""
            throw ProtocolError(description: "the page threw: \(description)")
        }
        return (result["result"] as? [String: Any])?["value"]
    }

    /// A picture of what the tab shows: PNG, or JPEG at `jpegQuality` (1–100).
    func screenshot(_ session: String, jpegQuality: Int? = nil) async throws -> Data {
        let format: [String: Any] = jpegQuality.map { ["format": "jpeg", "quality": $0] } ?? ["format": "png"]
        let shot = try await send("Page.captureScreenshot", format, session: session)
        guard let text = shot["data"] as? String, let data = Data(base64Encoded: text) else {
            throw ProtocolError(description: "no screenshot")
        }
        return data
    }

    /// The events so far with this method.
    func events(_ method: String) -> [[String: Any]] {
        events.filter { $0["method"] as? String == method }.compactMap { $0["params"] as? [String: Any] }
    }
}
