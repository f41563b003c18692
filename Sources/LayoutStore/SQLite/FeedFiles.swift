import Foundation
import LocalFileAccess

#if canImport(Glibc)
    import Glibc
#endif

/// The posted feeds of an SQLite store, one file each in a folder beside the database (`STORE.feeds/ID`).
///
/// Why not a table: a feed is megabytes that are written once and read at most once (to finish a layout after a
/// restart). In SQLite's write-ahead log every byte of it was written twice (the log, then the checkpoint into the
/// database), read back once by the checkpoint, and checksummed page by page: with 20 feeds of 11 MB posted at once,
/// SQLite's pwrite and pread calls alone were 6 % of the service's CPU (perf), most of those bytes the feeds'. A file
/// is written once. (SQLite's own measurements favour files for blobs larger than about 100 KB.)
///
/// A feed file is complete before its layout's row exists: it is written under a temporary name, flushed to disk,
/// and renamed into place, and only then is the row committed. A crash in between leaves a file no row names, which
/// the next start removes.
///
/// A new version of a subscribed feed that is its predecessor's with items appended is stored as a delta
/// (`ID.delta`): a header line naming a full feed file (its root) and how many of the root's bytes begin this feed,
/// then the rest of this feed's bytes. Writing a 224 MB feed and waiting for its flush took 230–670 ms of such a
/// version's time; its delta is the appended items. A delta names a full file, never another delta, so a read is one
/// root and one tail. A root stays while any delta names it: removing its layout renames it `ID.base` (no row names
/// it; each delta's row counts its whole feed, so the store's size is never under-counted), and removing the last
/// delta that names it takes it away.
struct FeedFiles: Sendable {
    let folder: String

    init(storePath: String) throws(StoreError) {
        folder = storePath + ".feeds"
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw StoreError(.cannotOpen, "\(storePath): cannot create the folder of its feeds \(folder): \(error.localizedDescription)")
        }
    }

    /// A layout's whole feed file.
    func path(of id: String) -> String { folder + "/" + id }
    private func deltaPath(of id: String) -> String { folder + "/" + id + Self.deltaSuffix }
    private func basePath(of id: String) -> String { folder + "/" + id + Self.baseSuffix }
    /// Where a root's bytes are: its layout's whole file, or `ID.base` once its layout went.
    private func rootPath(of id: String) -> String? {
        [path(of: id), basePath(of: id)].first { access($0, F_OK) == 0 }
    }
    private static let deltaSuffix = ".delta"
    private static let baseSuffix = ".base"
    private static let partialSuffix = ".partial"

    /// The blocking file work (a write waits for the disk's flush) runs on threads of its own: not on a request's
    /// or a layout's, and not on NIO's shared blocking pool, where it held up the address lookups of the photo
    /// fetches of running layouts.
    private static let queue = DispatchQueue(label: "feedlayout.feed-files", qos: .utility, attributes: .concurrent)

    /// Runs `work` on the feed files' queue.
    static func onQueue<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Swift.Result { try work() }) }
        }
    }

    // MARK: Writing

    /// Writes a layout's feed, durably (flushed, then renamed into place). Two requests posting the same feed write
    /// the same bytes under the same name, each through a temporary file of its own.
    /// - Parameter shared: The stored feed whose first bytes begin this one: the feed is written as a delta of that
    ///   feed's root when the root is there and the delta is at most a quarter of the feed; otherwise whole.
    func write(_ bytes: [UInt8], id: String, sharing shared: LayoutFeedPrefix? = nil) throws(StoreError) {
        if let shared, let header = deltaHeader(for: bytes.count, sharing: shared), header.layoutId != id {
            let line = Array(header.line.utf8)
            let tail = bytes[header.prefixLength...]
            try write([line, Array(tail)], to: deltaPath(of: id))
            return
        }
        try write([bytes], to: path(of: id))
    }

    /// The delta header for a feed of `count` bytes whose first `shared.prefixLength` are `shared.layoutId`'s, when a
    /// delta is worth it.
    private func deltaHeader(for count: Int, sharing shared: LayoutFeedPrefix) -> DeltaHeader? {
        var root = DeltaHeader(layoutId: shared.layoutId, prefixLength: shared.prefixLength, rootSize: 0)
        if let named = try? readDeltaHeader(of: shared.layoutId) {
            // The predecessor is itself a delta: its first bytes are its root's, and so are this feed's.
            guard shared.prefixLength >= named.prefixLength else { return nil }
            root = named
        }
        guard let size = rootPath(of: root.layoutId).flatMap(fileSize), root.prefixLength <= size,
            root.prefixLength > 0, (count - root.prefixLength) * 4 <= count
        else { return nil }
        root.rootSize = size
        return root
    }

    /// Writes `pieces` one after another to `target`, durably: a temporary file, flushed, renamed into place, and the
    /// rename flushed.
    private func write(_ pieces: [[UInt8]], to target: String) throws(StoreError) {
        let temporary = target + ".\(getpid()).\(UInt64.random(in: 0...UInt64.max))" + Self.partialSuffix
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure("cannot create", temporary) }
        var complete = true
        for piece in pieces where complete {
            var written = 0
            complete = piece.withUnsafeBytes { buffer -> Bool in
                while written < buffer.count {
                    let count = Glibc.write(descriptor, buffer.baseAddress! + written, buffer.count - written)
                    if count < 0 && errno == EINTR { continue }
                    guard count > 0 else { return false }
                    written += count
                }
                return true
            }
        }
        guard complete, fsync(descriptor) == 0 else {
            let error = failure("cannot write", temporary)
            Glibc.close(descriptor)
            unlink(temporary)
            throw error
        }
        // Written once and read at most once: its pages leave the page cache now that they are on disk. Kept, they
        // only crowd out the database's pages; and every feed written into new page-cache memory cost ten times
        // the CPU of one written into memory the previous feed freed (35 ms against 3 ms for 11 MB, measured).
        _ = posix_fadvise(descriptor, 0, 0, Int32(POSIX_FADV_DONTNEED))
        Glibc.close(descriptor)
        guard rename(temporary, target) == 0 else {
            let error = failure("cannot rename into place", temporary)
            unlink(temporary)
            throw error
        }
        // The rename itself must reach the disk before the row that names the file does.
        let directory = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            Glibc.close(directory)
        }
    }

    // MARK: Reading

    /// A layout's feed, or `nil` when there is no file for it.
    func read(id: String) throws(StoreError) -> [UInt8]? {
        if let whole = try readWhole(path(of: id)) { return whole }
        guard let header = try readDeltaHeader(of: id) else { return nil }
        // Only the root's shared bytes are read, straight into the feed, then the delta's own after its header line.
        guard let rootFile = rootPath(of: header.layoutId), fileSize(rootFile) == header.rootSize,
            var feed = try readPrefix(rootFile, count: header.prefixLength, reserving: fileSize(deltaPath(of: id)) ?? 0),
            let delta = try readWhole(deltaPath(of: id))
        else {
            throw StoreError(.ioFailed, "\(deltaPath(of: id)): the stored feed names \(header.layoutId), which is missing or not the file it was")
        }
        feed += delta[header.lineLength...]
        return feed
    }

    private func readWhole(_ file: String) throws(StoreError) -> [UInt8]? {
        let descriptor = open(file, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw failure("cannot open", file)
        }
        defer { Glibc.close(descriptor) }
        let bytes: [UInt8]
        do {
            bytes = try LocalFileGate.readAll(descriptor, path: file, maximumBytes: Int.max)
        } catch {
            throw StoreError(.ioFailed, "\(file): cannot read the stored feed: \(error.reason)")
        }
        _ = posix_fadvise(descriptor, 0, 0, Int32(POSIX_FADV_DONTNEED))
        return bytes
    }

    /// The first `count` bytes of `file` (`nil` when it is shorter or missing), in an array with room for `extra`
    /// bytes more.
    private func readPrefix(_ file: String, count: Int, reserving extra: Int) throws(StoreError) -> [UInt8]? {
        let descriptor = open(file, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw failure("cannot open", file)
        }
        defer {
            _ = posix_fadvise(descriptor, 0, 0, Int32(POSIX_FADV_DONTNEED))
            Glibc.close(descriptor)
        }
        var failed: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: count + extra) { buffer, initialized in
            while initialized < count {
                let read = pread(descriptor, buffer.baseAddress! + initialized, count - initialized, off_t(initialized))
                if read < 0 && errno == EINTR { continue }
                if read < 0 { failed = errno }
                guard read > 0 else { return }
                initialized += read
            }
        }
        if failed != 0 {
            errno = failed
            throw failure("cannot read", file)
        }
        return bytes.count == count ? bytes : nil
    }

    /// A delta's first line: `feedlayout-feed-delta 1 ROOT PREFIX ROOTSIZE`.
    struct DeltaHeader: Equatable {
        var layoutId: String
        var prefixLength: Int
        var rootSize: Int

        var line: String { "\(DeltaHeader.magic) 1 \(layoutId) \(prefixLength) \(rootSize)\n" }
        var lineLength: Int { line.utf8.count }
        static let magic = "feedlayout-feed-delta"

        init(layoutId: String, prefixLength: Int, rootSize: Int) {
            self.layoutId = layoutId
            self.prefixLength = prefixLength
            self.rootSize = rootSize
        }

        init?(line: Substring) {
            let fields = line.split(separator: " ")
            guard fields.count == 5, fields[0] == Self.magic, fields[1] == "1", let prefix = Int(fields[3]),
                let size = Int(fields[4]), !fields[2].contains("/")
            else { return nil }
            self.init(layoutId: String(fields[2]), prefixLength: prefix, rootSize: size)
        }
    }

    /// The header of `id`'s delta, or `nil` when it has none.
    func readDeltaHeader(of id: String) throws(StoreError) -> DeltaHeader? {
        let file = deltaPath(of: id)
        let descriptor = open(file, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw failure("cannot open", file)
        }
        defer { Glibc.close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0, let end = buffer[..<count].firstIndex(of: UInt8(ascii: "\n")),
            let header = DeltaHeader(line: Substring(decoding: buffer[..<end], as: UTF8.self))
        else { throw StoreError(.ioFailed, "\(file): not a stored feed delta") }
        return header
    }

    private func fileSize(_ file: String) -> Int? {
        var info = stat()
        return stat(file, &info) == 0 ? Int(info.st_size) : nil
    }

    // MARK: Removing

    /// Removes a layout's feed (holding the store's writer, once no row names the layout). A root that deltas still
    /// name is kept as `ID.base`; a delta's root kept so goes with the last delta that named it.
    func remove(id: String) {
        // The deltas' headers are read only when an answer depends on them: whether a whole file is a root, and
        // whether a root already without its layout is named by another delta.
        if access(path(of: id), F_OK) == 0 {
            if deltaHeaders().values.contains(where: { $0.layoutId == id }) {
                _ = rename(path(of: id), basePath(of: id))
            } else {
                _ = unlink(path(of: id))
            }
        }
        if let header = try? readDeltaHeader(of: id) {
            _ = unlink(deltaPath(of: id))
            if access(basePath(of: header.layoutId), F_OK) == 0,
                !deltaHeaders().values.contains(where: { $0.layoutId == header.layoutId })
            {
                _ = unlink(basePath(of: header.layoutId))
            }
        }
    }

    /// Whether a layout's feed is in place: its whole file, or its delta and the delta's root.
    func exists(id: String) -> Bool {
        if access(path(of: id), F_OK) == 0 { return true }
        guard let header = try? readDeltaHeader(of: id) else { return false }
        return rootPath(of: header.layoutId) != nil
    }

    /// The headers of every delta, by layout.
    private func deltaHeaders() -> [String: DeltaHeader] {
        var headers: [String: DeltaHeader] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        where name.hasSuffix(Self.deltaSuffix) {
            let id = String(name.dropLast(Self.deltaSuffix.count))
            if let header = try? readDeltaHeader(of: id) { headers[id] = header }
        }
        return headers
    }

    /// Removes what a crash left: feed files no layout names (a root that a kept delta names is kept, as
    /// `ID.base`), and unfinished temporary files.
    func removeStray(keeping ids: Set<String>) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        // Unfinished files, and deltas no layout names, first: the roots kept are those the remaining deltas name.
        for name in names
        where name.hasSuffix(Self.partialSuffix)
            || (name.hasSuffix(Self.deltaSuffix) && !ids.contains(String(name.dropLast(Self.deltaSuffix.count))))
        {
            unlink(path(of: name))
        }
        let roots = Set(deltaHeaders().values.map(\.layoutId))
        for name in names where !name.hasSuffix(Self.partialSuffix) && !name.hasSuffix(Self.deltaSuffix) {
            let isBase = name.hasSuffix(Self.baseSuffix)
            let id = isBase ? String(name.dropLast(Self.baseSuffix.count)) : name
            if !isBase && ids.contains(id) { continue }
            if roots.contains(id) {
                // A root whose layout went (a crash between its row and its file): kept for the deltas.
                if !isBase { _ = rename(path(of: id), basePath(of: id)) }
            } else {
                unlink(path(of: name))
            }
        }
    }

    /// The failure of the last system call, for `file`: a full disk (or a quota) is ``StoreError/Code/storageFull``.
    private func failure(_ what: String, _ file: String) -> StoreError {
        let code = errno
        if code == ENOSPC || code == EDQUOT {
            return StoreError(.storageFull, "\(file): \(what) the stored feed: the disk under the store is full")
        }
        return StoreError(.ioFailed, "\(file): \(what) the stored feed: \(String(cString: strerror(code)))")
    }
}
