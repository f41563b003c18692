import Foundation

/// A layout as `GET /v1/layouts` lists it and as the evictor weighs it.
public struct LayoutListing: Sendable, Equatable {
    public var id: String
    public var status: String
    public var itemCount: Int
    /// What the layout holds in the store, in bytes: its feed, its pages as stored (gzipped) with their cursors,
    /// and ``pinRecordBytes`` per pin. The database's own overhead (indexes, free pages) is not counted.
    public var bytes: Int
    /// When it was created, to the microsecond (the store keeps no finer time).
    public var createdMicroseconds: Int64
    /// When it was last read (a page, its pins, its status), to the time of the batch that recorded it; `nil`:
    /// never read.
    public var lastReadMicroseconds: Int64?

    public init(
        id: String, status: String, itemCount: Int, bytes: Int, createdMicroseconds: Int64,
        lastReadMicroseconds: Int64?
    ) {
        self.id = id
        self.status = status
        self.itemCount = itemCount
        self.bytes = bytes
        self.createdMicroseconds = createdMicroseconds
        self.lastReadMicroseconds = lastReadMicroseconds
    }

    public var created: Date { Date(microsecondsSince1970: createdMicroseconds) }
    public var lastRead: Date? { lastReadMicroseconds.map(Date.init(microsecondsSince1970:)) }
    /// Where the listing goes on after this layout.
    public var cursor: LayoutListCursor { LayoutListCursor(createdMicroseconds: createdMicroseconds, id: id) }

    /// The bytes a pin is counted as: its record in its page's pin block.
    public static let pinRecordBytes = PinBlock.recordBytes

    /// The bytes a stored page adds to its layout's ``bytes``.
    public static func bytes(of page: PageWrite) -> Int {
        page.gzip.count + (page.cursor?.utf8.count ?? 0) + page.pins.count * pinRecordBytes
    }
}

/// Where a listing of layouts goes on: after the layout created at this microsecond with this id. Its text form
/// (``description``, ``init(_:)``) is what clients pass back as `after`.
public struct LayoutListCursor: Sendable, Hashable, CustomStringConvertible {
    public var createdMicroseconds: Int64
    public var id: String

    public init(createdMicroseconds: Int64, id: String) {
        self.createdMicroseconds = createdMicroseconds
        self.id = id
    }

    /// `MICROSECONDS-ID`, e.g. `1764356400123456-5be0d4d2f39a0c0c2f3f38ef3f2e6a41`.
    public var description: String { "\(createdMicroseconds)-\(id)" }

    /// Reads a cursor's text form; `nil` for anything else (a cursor is 1 to 19 digits, `-` and a layout id of 32
    /// lower-case hex digits).
    public init?(_ text: String) {
        let parts = text.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, (1...19).contains(parts[0].utf8.count),
            parts[0].utf8.allSatisfy({ (0x30...0x39).contains($0) }), let micros = Int64(parts[0]),
            parts[1].utf8.count == 32,
            parts[1].utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        else { return nil }
        self.init(createdMicroseconds: micros, id: String(parts[1]))
    }
}

/// What a store holds, for `/metrics` and the evictor.
public struct StoreUsage: Sendable, Equatable {
    /// ``LayoutListing/bytes`` of every layout, summed.
    public var bytes: Int
    /// Layouts by status (`running`, `done`, `failed`).
    public var layoutsByStatus: [String: Int]

    public init(bytes: Int, layoutsByStatus: [String: Int]) {
        self.bytes = bytes
        self.layoutsByStatus = layoutsByStatus
    }
}

extension Date {
    /// The date `microseconds` after 1970-01-01T00:00:00Z.
    public init(microsecondsSince1970 microseconds: Int64) {
        self.init(timeIntervalSince1970: Double(microseconds) / 1_000_000)
    }

    /// Microseconds since 1970-01-01T00:00:00Z, rounded to the nearest.
    public var microsecondsSince1970: Int64 { Int64((timeIntervalSince1970 * 1_000_000).rounded()) }
}
