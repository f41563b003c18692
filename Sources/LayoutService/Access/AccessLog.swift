import Foundation
import LayoutPages
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// How the service's log lines are written: `text` (one `key=value` line, for people) or `json` (one JSON object
/// a line, for log collectors).
public enum LogFormat: String, Sendable, CaseIterable {
    case text, json
}

/// One line per answered request: time, method, route, path, status, bytes, duration, request id and key name.
///
/// Lines are gathered in a buffer and written when it holds 16 KiB, when 200 ms have passed since the last
/// write, every second by ``run()``, and when the service stops: at tens of thousands of page requests a second, a
/// write per line would cost more than answering the request.
public final class AccessLog: Service, Sendable {
    struct Entry {
        var method: String
        var route: String
        var path: String
        var status: Int
        var bytes: Int?
        var duration: Duration
        var requestID: String
        var keyName: String?
    }

    private let format: LogFormat
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    private struct Pending {
        var bytes: [UInt8] = []
        var lastWrite = ContinuousClock.now
        /// The time text of the current second, made once a second.
        var second = 0
        var secondText: [UInt8] = []
    }
    private let pending = Mutex(Pending())

    /// - Parameter destination: `-` for standard error, else a file appended to (created with mode 0640).
    public init(destination: String, format: LogFormat) throws(AccessLogError) {
        self.format = format
        if destination == "-" {
            descriptor = 2
            ownsDescriptor = false
        } else {
            let opened = open(destination, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o640)
            guard opened >= 0 else {
                throw AccessLogError(description: "\(destination): cannot open the access log (\(String(cString: strerror(errno))))")
            }
            descriptor = opened
            ownsDescriptor = true
        }
    }

    deinit {
        flush()
        if ownsDescriptor { close(descriptor) }
    }

    func record(_ entry: Entry) {
        let now = ContinuousClock.now
        let wallClock = Date().timeIntervalSince1970
        let second = Int(wallClock)
        let milliseconds = min(999, Int((wallClock - Double(second)) * 1000))
        pending.withLock { pending in
            if pending.second != second {
                pending.second = second
                pending.secondText = Self.secondText(second)
            }
            append(entry, to: &pending.bytes, second: pending.secondText, milliseconds: milliseconds)
            if pending.bytes.count >= 16 * 1024 || now - pending.lastWrite >= .milliseconds(200) {
                write(&pending, now: now)
            }
        }
    }

    /// Writes what is buffered.
    public func flush() {
        pending.withLock { write(&$0, now: ContinuousClock.now) }
    }

    /// Writes the buffer every second (the tail of a burst would wait for the next request otherwise), and once more
    /// when the service stops.
    public func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while true {
                try await Task.sleep(for: .seconds(1))
                self.flush()
            }
        }
        flush()
    }

    private func write(_ pending: inout Pending, now: ContinuousClock.Instant) {
        pending.lastWrite = now
        guard !pending.bytes.isEmpty else { return }
        Self.writeAll(pending.bytes, to: descriptor)
        pending.bytes.removeAll(keepingCapacity: true)
    }

    /// Writes `bytes` whole (again after a signal, on after a short write); a log that cannot be written (a full disk)
    /// drops its lines rather than stop the service.
    static func writeAll(_ bytes: [UInt8], to descriptor: Int32) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }

    private func append(_ entry: Entry, to line: inout [UInt8], second: [UInt8], milliseconds: Int) {
        let millis: [UInt8] = [
            UInt8(ascii: "."), UInt8(48 + milliseconds / 100), UInt8(48 + milliseconds / 10 % 10),
            UInt8(48 + milliseconds % 10), UInt8(ascii: "Z"),
        ]
        let duration = entry.duration.components
        let microseconds = Int(duration.seconds) * 1_000_000 + Int(duration.attoseconds / 1_000_000_000_000)
        switch format {
        case .text:
            line += second
            line += millis
            line.appendText(" info feedlayout.access: ")
            line.appendText(entry.method)
            line.appendText(" ")
            line.appendText(entry.route)
            line.appendText(" path=")
            Self.appendQuotedIfNeeded(entry.path, to: &line)
            line.appendText(" status=")
            line.appendDecimal(entry.status)
            line.appendText(" bytes=")
            if let bytes = entry.bytes { line.appendDecimal(bytes) } else { line.appendText("-") }
            line.appendText(" duration_ms=")
            line.appendDecimal(microseconds / 1000)
            line.append(UInt8(ascii: "."))
            let fraction = microseconds % 1000
            line.append(UInt8(48 + fraction / 100))
            line.append(UInt8(48 + fraction / 10 % 10))
            line.append(UInt8(48 + fraction % 10))
            line.appendText(" request_id=")
            line.appendText(entry.requestID)
            line.appendText(" key=")
            line.appendText(entry.keyName ?? "-")
            line.append(UInt8(ascii: "\n"))
        case .json:
            var json = JSONWriter()
            json.beginObject()
            json.field("time", String(decoding: second + millis, as: UTF8.self))
            json.field("level", "info")
            json.field("label", "feedlayout.access")
            json.field("method", entry.method)
            json.field("route", entry.route)
            json.field("path", entry.path)
            json.field("status", entry.status)
            if let bytes = entry.bytes { json.field("bytes", bytes) }
            json.field("durationMs", Double(microseconds) / 1000)
            json.field("requestId", entry.requestID)
            if let keyName = entry.keyName { json.field("key", keyName) }
            json.endObject()
            line += json.takeBytes()
            line.append(UInt8(ascii: "\n"))
        }
    }

    /// A path as a value: as it is when it holds no space, quote or control byte, else quoted with escapes.
    private static func appendQuotedIfNeeded(_ text: String, to line: inout [UInt8]) {
        guard text.utf8.contains(where: { $0 <= 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == 0x7F }) else {
            line.appendText(text)
            return
        }
        line.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case 0x22, 0x5C:
                line.append(0x5C)
                line.append(byte)
            case 0..<0x20, 0x7F:
                line.appendText("\\x" + String(byte, radix: 16).leftPadded(to: 2))
            default:
                line.append(byte)
            }
        }
        line.append(UInt8(ascii: "\""))
    }

    /// `2026-11-28T19:20:01` of a second since the epoch, in UTC.
    static func secondText(_ second: Int) -> [UInt8] {
        var time = time_t(second)
        var parts = tm()
        gmtime_r(&time, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S", &parts)
        return buffer.prefix(count).map { UInt8(bitPattern: $0) }
    }
}

public struct AccessLogError: Error, CustomStringConvertible, Sendable {
    public var description: String
}

extension [UInt8] {
    fileprivate mutating func appendText(_ text: String) { append(contentsOf: text.utf8) }

    /// A non-negative whole number's decimal digits, without making a String of it.
    fileprivate mutating func appendDecimal(_ value: Int) {
        var divisor = 1
        while divisor <= value / 10 { divisor *= 10 }
        var rest = Swift.max(0, value)
        while divisor > 0 {
            append(UInt8(48 + rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
