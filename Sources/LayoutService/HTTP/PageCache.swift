import Foundation
import HTTPTypes
import LayoutStore
import NIOCore
import Synchronization

/// Recently served pages in memory, each form (plain or gzipped) on its own and ready to send, bounded by bytes: a
/// page one client asks for is usually asked for again (the next client scrolling the same feed), and answering
/// from memory keeps the store, and copying, out of the hot path. Pages never change once stored, so nothing
/// here is ever stale.
final class PageCache: Sendable {
    struct Key: Hashable, Sendable {
        var id: String
        var layoutIndex: Int
        var pageIndex: Int
        var gzip: Bool
    }

    /// A page's form as sent: its bytes (shared by every response, never copied), its entity tag, and whether it
    /// is the gzipped form.
    struct Entry: Sendable {
        let body: ByteBuffer
        let entityTag: String
        let isGzip: Bool
        /// The status line and fields of the `200` answer as they go on the wire (no `Date`, `Server` or
        /// `Content-Length` yet): what ``PageFastPathHandler`` sends for most requests, made once per page.
        let okHead: [UInt8]

        init(body: ByteBuffer, entityTag: String, isGzip: Bool) {
            self.body = body
            self.entityTag = entityTag
            self.isGzip = isGzip
            okHead = Self.wireHead(status: .ok, fields: Self.fields(entityTag: entityTag, gzipBody: isGzip))
        }

        /// `HTTP/1.1 200 OK\r\n` and a line per field, spelled as NIO writes the router's answers.
        static func wireHead(status: HTTPResponse.Status, fields: HTTPFields) -> [UInt8] {
            var head = "HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\n"
            for field in fields { head += field.name.rawName + ": " + field.value + "\r\n" }
            return Array(head.utf8)
        }

        /// The answer to a request for this form: `304` when `If-None-Match` names its tag, else `200` with the
        /// bytes; both with the headers every page answer carries (pages never change, so any cache may keep them
        /// for good). The router's route and the fast path both answer with this.
        func answer(ifNoneMatch: String?) -> (status: HTTPResponse.Status, fields: HTTPFields, body: ByteBuffer?) {
            if let ifNoneMatch, PageEncoding.ifNoneMatch(ifNoneMatch, names: entityTag) {
                return (.notModified, Self.fields(entityTag: entityTag, gzipBody: false), nil)
            }
            return (.ok, Self.fields(entityTag: entityTag, gzipBody: isGzip), body)
        }

        /// The fields of every page answer, and `Content-Encoding` when the body sent is gzipped.
        private static func fields(entityTag: String, gzipBody: Bool) -> HTTPFields {
            var fields: HTTPFields = [
                .contentType: "application/json", .eTag: entityTag,
                .cacheControl: "public, max-age=31536000, immutable", .vary: "Accept-Encoding",
            ]
            if gzipBody { fields[.contentEncoding] = "gzip" }
            return fields
        }
    }

    private struct State {
        var entries: [Key: (entry: Entry, lastUse: UInt64)] = [:]
        var bytes = 0
        var clock: UInt64 = 0
        /// Layouts removed so far (``removeLayout(_:)``).
        var removals: UInt64 = 0
    }

    private let state = Mutex(State())
    private let byteLimit: Int
    /// The layouts whose pages were read since the reads were last written to the store: the page fast path marks
    /// them here, as it knows only this cache.
    let reads = LayoutReads()

    init(byteLimit: Int) { self.byteLimit = byteLimit }

    subscript(key: Key) -> Entry? {
        get {
            state.withLock { state in
                guard let found = state.entries[key] else { return nil }
                state.clock += 1
                state.entries[key]?.lastUse = state.clock
                return found.entry
            }
        }
        set {
            guard let entry = newValue else { return }
            insert(entry, for: key, unlessRemovedSince: nil)
        }
    }

    /// How many layouts were removed so far: read it before reading a page from the store, and pass it to
    /// ``insert(_:for:unlessRemovedSince:)``, so that a page read just before its layout was removed is not kept.
    var removalCount: UInt64 { state.withLock { $0.removals } }

    /// Forgets every page of a removed layout (a page in memory would otherwise still be answered, by the fast path
    /// too).
    func removeLayout(_ id: String) {
        state.withLock { state in
            state.removals += 1
            for (key, held) in state.entries where key.id == id {
                state.entries[key] = nil
                state.bytes -= held.entry.body.readableBytes
            }
        }
    }

    /// Forgets every page: after removals this instance may not have heard of (its shared store's notifications
    /// were interrupted).
    func removeAll() {
        state.withLock { state in
            state.removals += 1
            state.entries.removeAll()
            state.bytes = 0
        }
    }

    /// Keeps a page's form, unless a layout was removed since `removals` (``removalCount``; `nil`: keep it anyway).
    func insert(_ entry: Entry, for key: Key, unlessRemovedSince removals: UInt64?) {
        let size = entry.body.readableBytes
        guard size <= byteLimit / 4 else { return }
        state.withLock { state in
            if let removals, state.removals != removals { return }
            guard state.entries[key] == nil else { return }
            // Past the limit, the least recently used half goes: one sort per many insertions.
            if state.bytes + size > byteLimit {
                let byAge = state.entries.sorted { $0.value.lastUse < $1.value.lastUse }
                for (old, held) in byAge.prefix(max(1, byAge.count / 2)) {
                    state.entries[old] = nil
                    state.bytes -= held.entry.body.readableBytes
                }
            }
            state.clock += 1
            state.entries[key] = (entry, state.clock)
            state.bytes += size
        }
    }
}
