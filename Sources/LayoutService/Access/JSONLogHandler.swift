import Foundation
import LayoutPages
import Logging
import Synchronization

/// Log lines as JSON objects on standard error, one a line (`--log-format json`): `time`, `level`, `label`,
/// `message`, the metadata's members, and `source` for warnings and worse. Log collectors read them without a
/// pattern of their own.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let label: String
    private static let output = Mutex(())

    public init(label: String) {
        self.label = label
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let now = Date().timeIntervalSince1970
        let second = Int(now)
        var json = JSONWriter()
        json.beginObject()
        json.field(
            "time",
            String(decoding: AccessLog.secondText(second), as: UTF8.self)
                + String(format: ".%03dZ", min(999, Int((now - Double(second)) * 1000))))
        json.field("level", event.level.rawValue)
        json.field("label", label)
        json.field("message", event.message.description)
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
            json.key(text: key)
            json.string(value.description)
        }
        if event.level >= .warning { json.field("source", "\(event.file):\(event.line)") }
        json.endObject()
        json.appendRaw("\n")
        let bytes = json.takeBytes()
        // One write(2) a line, whole, under a lock: lines of several threads never interleave.
        Self.output.withLock { _ in AccessLog.writeAll(bytes, to: 2) }
    }
}
