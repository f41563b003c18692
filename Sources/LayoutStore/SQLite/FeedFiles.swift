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

    func path(of id: String) -> String { folder + "/" + id }

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

    /// Writes a layout's feed, durably (flushed, then renamed into place). Two requests posting the same feed write
    /// the same bytes under the same name, each through a temporary file of its own.
    func write(_ bytes: [UInt8], id: String) throws(StoreError) {
        let target = path(of: id)
        let temporary = target + ".\(getpid()).\(UInt64.random(in: 0...UInt64.max)).partial"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure("cannot create", temporary) }
        var written = 0
        let complete = bytes.withUnsafeBytes { buffer -> Bool in
            while written < buffer.count {
                let count = Glibc.write(descriptor, buffer.baseAddress! + written, buffer.count - written)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                written += count
            }
            return true
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

    /// A layout's feed, or `nil` when there is no file for it.
    func read(id: String) throws(StoreError) -> [UInt8]? {
        let file = path(of: id)
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

    /// Removes what a crash left: feed files no layout names, and unfinished temporary files.
    func removeStray(keeping ids: Set<String>) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where !ids.contains(name) {
            unlink(path(of: name))
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

extension FeedFiles {
    /// Removes a layout's feed file, if there is one. A removal that fails or that a crash loses leaves a file no
    /// row names, which ``removeStray(keeping:)`` removes at the next start.
    func remove(id: String) {
        _ = unlink(path(of: id))
    }

    /// Whether a layout's feed file is in place.
    func exists(id: String) -> Bool {
        access(path(of: id), F_OK) == 0
    }
}
