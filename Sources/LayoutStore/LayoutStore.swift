import Foundation

/// What a new layout's feed shares with a stored layout's: its first `prefixLength` bytes are the first bytes of
/// `layoutId`'s feed.
public struct LayoutFeedPrefix: Sendable, Equatable {
    public var layoutId: String
    public var prefixLength: Int

    public init(layoutId: String, prefixLength: Int) {
        self.layoutId = layoutId
        self.prefixLength = prefixLength
    }
}

/// Where the service keeps what it computed: each layout's request and feed, its pages (gzipped),
/// and the frame of every pin for viewport queries. ``SQLiteLayoutStore`` is one process's; ``PostgresLayoutStore``
/// is shared by several instances, which take turns computing a layout through leases.
///
/// Every page is stored in one transaction with its pins and the layout's running counts, so a reader sees a page
/// whole or not at all, and a process killed at any moment leaves pages that are a prefix of the layout: whoever
/// resumes it starts from the last stored page's cursor.
public protocol LayoutStore: Sendable {
    /// Stores a new layout, unless one with this id exists. `options` is the layout's named options as their stored
    /// JSON; the store keeps the text as it is.
    /// - Returns: Whether it was new (the caller then starts computing it).
    /// - Parameter sharing: A stored layout whose feed's first bytes begin this feed (a new version with items
    ///   appended): a store may keep only the rest (the SQLite store writes a delta; PostgreSQL references the
    ///   predecessor's chunks that lie inside the prefix).
    func insertLayout(
        id: String, options: String, feedName: String, baseURL: String?, feed: [UInt8], sharing: LayoutFeedPrefix?,
        parts: [(width: Double, columns: Int)]
    ) async throws -> Bool

    func layout(_ id: String) async throws -> LayoutRecord?

    /// A layout's feed, as it was posted.
    func feed(of id: String) async throws -> [UInt8]?

    /// The ids of layouts still running that nobody computes (after a crash or a shutdown: the ones to resume),
    /// oldest first.
    func claimableLayouts() async throws -> [String]

    /// Takes the right to compute a running layout; `false` when another instance holds it.
    func claim(_ id: String) async throws -> Bool

    /// Gives the right up (a layout cancelled by a shutdown), so another instance may take it over at once.
    func release(_ id: String) async

    /// How often to look for layouts whose computing instance stopped (`claimableLayouts()`); `nil` when no other
    /// instance shares the store, so only the start has layouts to resume.
    var takeoverInterval: Duration? { get }

    /// Calls `changed` with a layout's id whenever another instance stores one of its pages or ends it (`nil`:
    /// any layout may have changed), until the task is cancelled. A store of one process returns at once.
    func watchChanges(_ changed: @escaping @Sendable (String?) async -> Void) async

    /// Lets go of connections and leases.
    func close()

    /// Stores a page, its pins and the counts it adds, in one transaction. A page stored before (a layout with
    /// breakpoints restarted from its beginning) is left as it is: the same options and feed give the same bytes.
    /// - Throws: ``StoreError`` when this instance no longer holds the layout (another took it over).
    func storePage(_ write: PageWrite, layoutId id: String) async throws

    /// Stores pages in order, as ``storePage(_:layoutId:)`` stores each: in one transaction where the store can
    /// (SQLite), so that pages that waited for the store are committed together.
    func storePages(_ writes: [PageWrite], layoutId id: String) async throws

    /// Makes another layout's first pages this one's beginning: pages `0..<pageCount` of `source`'s first layout
    /// (layout index 0), with their pins, become `id`'s (by reference: ``SharedRows``), and sets `id`'s part (page
    /// count, height, last cursor, bytes) and counts (items, warnings) as storing those pages would have, in one transaction. `id` must be
    /// running, held by this instance, have one layout and no page yet. The caller has checked that the pages are
    /// byte for byte the ones `id` would make (a new version of a feed whose items were appended: see
    /// `LayoutRunner`), and resumes `id` from the last one's cursor.
    /// - Returns: Whether the pages were taken; `false`, with nothing changed, when `source` does not hold them
    ///   all (removed meanwhile, or stored before the store kept each page's counts) or `id` has pages already.
    /// - Throws: ``StoreError`` when this instance no longer holds `id` (another took it over).
    func adoptPages(from source: String, pageCount: Int, into id: String) async throws -> Bool

    /// Marks a layout done, adding the feed-wide warnings (they are known only at the end of the feed).
    func finishLayout(_ id: String, feedWarnings: [String: Int]) async throws

    /// Marks a layout failed; the pages it stored stay.
    func failLayout(_ id: String, code: String, message: String) async throws

    /// A page as stored: gzipped (the only form kept; ``page(_:layoutIndex:pageIndex:gzip:)`` gives either).
    func gzippedPage(_ id: String, layoutIndex: Int, pageIndex: Int) async throws -> Data?

    /// The page whose cursor this is: its layout, layout index and page index. With several layouts holding the
    /// same cursor (two feeds that begin alike), `layoutId` picks one, else the newest.
    func pageWithCursor(_ cursor: String, layoutId: String?) async throws -> (
        id: String, layoutIndex: Int, pageIndex: Int
    )?

    /// The pins of a layout from `itemIndex` on, in index order.
    func pins(_ id: String, layoutIndex: Int, from itemIndex: Int) async throws -> [PinRecord]

    // MARK: Keeping and removing (see LayoutListing.swift)

    /// Removes a layout and all it holds: its parts, pages, pins and feed rows in one transaction (a process killed
    /// at any moment leaves the layout whole or gone), then an SQLite store's feed file (one a kill leaves behind
    /// is removed at the next start, as no row names it).
    /// - Returns: Whether there was such a layout.
    func removeLayout(_ id: String) async throws -> Bool

    /// Layouts in the order they were created (then by id), after `cursor`, at most `limit`.
    func listLayouts(after cursor: LayoutListCursor?, limit: Int) async throws -> [LayoutListing]

    /// Records that these layouts were read at `time` (the service gathers reads in memory and writes them in
    /// batches: page serving never waits for this). A layout's last read never goes back in time.
    func recordReads(_ ids: [String], at time: Date) async throws

    /// The bytes the layouts hold (``LayoutListing/bytes`` summed) and how many layouts there are by status.
    func usage() async throws -> StoreUsage

    /// Calls `removed` with the id of every layout removed from the store, by any instance sharing it, until the task
    /// is cancelled; `nil` after a lost connection was opened again (any layout may have been removed meanwhile). A
    /// store of one process returns at once (its one process knows what it removes).
    func watchRemovals(_ removed: @escaping @Sendable (String?) async -> Void) async

    /// Layouts that may be removed to keep the store within its bounds: only `done` and `failed` ones (never one
    /// being computed), least recently read first (a layout never read counts from its creation), at most `limit`.
    func removableLayouts(limit: Int) async throws -> [LayoutListing]

    // MARK: Readiness

    /// Asks the store a cheap question (`SELECT 1`), for the service's readiness (`/readyz`).
    /// - Throws: ``StoreError`` when the store does not answer (PostgreSQL down: a transient one) or fails.
    func checkAvailability() async throws
}

extension LayoutStore {
    public func storePages(_ writes: [PageWrite], layoutId id: String) async throws {
        for write in writes { try await storePage(write, layoutId: id) }
    }

    /// One form of a page: gzipped as stored, or its JSON, inflated from it. Stores keep only the gzipped form: the
    /// JSON too was five times the bytes to write (twice, through SQLite's write-ahead log) for every page made,
    /// where inflating is cheap and happens once per page a plain request misses in ``PageCache``.
    public func page(_ id: String, layoutIndex: Int, pageIndex: Int, gzip: Bool) async throws -> Data? {
        guard let stored = try await gzippedPage(id, layoutIndex: layoutIndex, pageIndex: pageIndex) else { return nil }
        if gzip { return stored }
        guard let json = Gzip.decompress([UInt8](stored)) else {
            throw StoreError(
                .damaged, "page \(pageIndex) of layout \(id) (layout \(layoutIndex)) is damaged in the store: not gzip")
        }
        return Data(json)
    }
}

/// A layout as stored.
public struct LayoutRecord: Sendable {
    public var id: String
    public var status: String
    /// The request's layout options, as their stored JSON (`LayoutOptionValues.storedJSON(_:)`).
    public var options: String
    public var feedName: String
    public var baseURL: String?
    public var itemCount: Int
    public var warnings: [String: Int]
    public var errorCode: String?
    public var errorMessage: String?
    public var parts: [PartRecord]

    public init(
        id: String, status: String, options: String, feedName: String, baseURL: String?, itemCount: Int,
        warnings: [String: Int], errorCode: String?, errorMessage: String?, parts: [PartRecord]
    ) {
        self.id = id
        self.status = status
        self.options = options
        self.feedName = feedName
        self.baseURL = baseURL
        self.itemCount = itemCount
        self.warnings = warnings
        self.errorCode = errorCode
        self.errorMessage = errorMessage
        self.parts = parts
    }
}

/// One of a layout's layouts (one per breakpoint).
public struct PartRecord: Sendable {
    public var layoutIndex: Int
    public var width: Double
    public var columns: Int
    public var pageCount: Int
    public var contentHeight: Double
    public var lastCursor: String?

    public init(
        layoutIndex: Int, width: Double, columns: Int, pageCount: Int, contentHeight: Double, lastCursor: String?
    ) {
        self.layoutIndex = layoutIndex
        self.width = width
        self.columns = columns
        self.pageCount = pageCount
        self.contentHeight = contentHeight
        self.lastCursor = lastCursor
    }
}

/// A pin's place, for viewport queries and snapping, and where its JSON sits in its page's bytes.
public struct PinRecord: Sendable {
    public var itemIndex: Int
    public var column: Int
    public var columnSpan: Int
    public var x: Int, y: Int, width: Int, height: Int
    public var pageIndex: Int
    public var jsonOffset: Int
    public var jsonLength: Int

    public init(
        itemIndex: Int, column: Int, columnSpan: Int, x: Int, y: Int, width: Int, height: Int, pageIndex: Int,
        jsonOffset: Int, jsonLength: Int
    ) {
        self.itemIndex = itemIndex
        self.column = column
        self.columnSpan = columnSpan
        self.x = x
        self.y = y
        self.width = width
        self.height = height
        self.pageIndex = pageIndex
        self.jsonOffset = jsonOffset
        self.jsonLength = jsonLength
    }
}

/// A page about to be stored: its bytes (`json`, as `feedlayout layout` writes them; stored only gzipped), its pins,
/// and what it adds to the layout's counts.
public struct PageWrite: Sendable {
    public var layoutIndex: Int
    public var pageIndex: Int
    public var json: [UInt8]
    public var gzip: [UInt8]
    public var cursor: String?
    public var contentHeight: Double
    public var pins: [PinRecord]
    /// Items and warnings by code: counted from the first layout's pages only, so breakpoints count each item
    /// once (as the command's summary does).
    public var itemCount: Int
    public var warnings: [String: Int]

    public init(
        layoutIndex: Int, pageIndex: Int, json: [UInt8], gzip: [UInt8], cursor: String?, contentHeight: Double,
        pins: [PinRecord], itemCount: Int, warnings: [String: Int]
    ) {
        self.layoutIndex = layoutIndex
        self.pageIndex = pageIndex
        self.json = json
        self.gzip = gzip
        self.cursor = cursor
        self.contentHeight = contentHeight
        self.pins = pins
        self.itemCount = itemCount
        self.warnings = warnings
    }
}

extension LayoutStore {
    /// Stores a new layout whose feed shares nothing with a stored one.
    public func insertLayout(
        id: String, options: String, feedName: String, baseURL: String?, feed: [UInt8],
        parts: [(width: Double, columns: Int)]
    ) async throws -> Bool {
        try await insertLayout(
            id: id, options: options, feedName: feedName, baseURL: baseURL, feed: feed, sharing: nil, parts: parts)
    }
}
