internal import CFeedLayoutShims
import Foundation

/// An `--out` folder that holds exactly one whole run's pages at every moment, even when a run is killed.
///
/// A run writes into a staging folder beside the target (`.NAME.feedlayout-staging`); ``commit()`` swaps the two
/// in one rename (Linux `RENAME_EXCHANGE`) and then removes the old pages, so a reader, or a `kill -9` at any
/// moment, finds either the previous run's folder or this one's, never a mix. A lock file beside it
/// (`.NAME.feedlayout-lock`, held with `flock` for the run) keeps a second run from writing the same folder at
/// the same time; the staging folder a killed run left is removed by the next run on that folder.
final class OutputFolder {
    /// The folder the pages end up in.
    let target: String
    /// Where this run writes them until it commits.
    let staging: String
    private let lockPath: String
    private let lockDescriptor: Int32
    private var stagingCreated = false
    private var committed = false

    /// Takes the folder's lock and clears what a killed run left.
    ///
    /// - Throws: `LayoutError.outputFailed` when another run holds the folder, or it cannot be prepared.
    init(_ path: String) throws(LayoutError) {
        let url = URL(fileURLWithPath: path, isDirectory: true).standardizedFileURL
        let name = url.lastPathComponent
        let parent = url.deletingLastPathComponent().path
        guard !name.isEmpty, name != "/", name != ".", name != ".." else {
            throw LayoutError(.invalidOptions, "--out \(path): name a folder to hold the pages, not the file system root")
        }
        target = url.path
        staging = parent + "/." + name + ".feedlayout-staging"
        lockPath = parent + "/." + name + ".feedlayout-lock"
        var status = stat()
        if lstat(target, &status) == 0, status.st_mode & S_IFMT != S_IFDIR, status.st_mode & S_IFMT != S_IFLNK {
            throw LayoutError(.outputFailed, "--out \(path): it exists and is not a folder")
        }
        do {
            try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        } catch {
            throw LayoutError(.outputFailed, "--out \(path): cannot create the folder \(parent): \(Self.reason(error))")
        }
        lockDescriptor = try Self.lock(lockPath, naming: path)
        if FileManager.default.fileExists(atPath: staging) {
            // A run that was killed before it committed: its pages never became the folder.
            do {
                try FileManager.default.removeItem(atPath: staging)
            } catch {
                Self.unlock(lockPath, lockDescriptor)
                throw LayoutError(
                    .outputFailed, "--out \(path): cannot remove an unfinished run's \(staging): \(Self.reason(error))")
            }
        }
    }

    deinit {
        if stagingCreated && !committed { try? FileManager.default.removeItem(atPath: staging) }
        Self.unlock(lockPath, lockDescriptor)
    }

    /// Creates the staging folder of one layout (`subfolder` is "" or a breakpoint's folder) before its first
    /// page, carrying over what the new folder keeps: the user's own files at the top, and, when the run resumes
    /// at page `firstPageIndex`, the pages before it (hard links, so nothing is copied).
    func prepareLayout(_ subfolder: String, firstPageIndex: Int) throws(LayoutError) {
        let manager = FileManager.default
        do {
            if !stagingCreated {
                try manager.createDirectory(atPath: staging, withIntermediateDirectories: false)
                stagingCreated = true
                for name in (try? manager.contentsOfDirectory(atPath: target)) ?? []
                where !PageWriter.isPageFileName(name) {
                    var status = stat()
                    guard lstat(target + "/" + name, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { continue }
                    try carry(name)
                }
            }
            let folder = subfolder.isEmpty ? "" : subfolder + "/"
            if !subfolder.isEmpty { try manager.createDirectory(atPath: staging + "/" + subfolder, withIntermediateDirectories: true) }
            guard firstPageIndex > 0 else { return }
            for name in (try? manager.contentsOfDirectory(atPath: target + "/" + folder)) ?? [] {
                guard let number = PageWriter.pageNumber(ofFileName: name), number <= firstPageIndex else { continue }
                try carry(folder + name)
            }
        } catch let error as LayoutError {
            throw error
        } catch {
            throw LayoutError(.outputFailed, "--out \(target): cannot prepare the run's folder \(staging): \(Self.reason(error))")
        }
    }

    private func carry(_ relative: String) throws(LayoutError) {
        guard link(target + "/" + relative, staging + "/" + relative) == 0 else {
            throw LayoutError(
                .outputFailed, "\(target)/\(relative): cannot keep it in the new folder: \(String(cString: strerror(errno)))")
        }
    }

    /// Makes the staged pages the folder, in one step; the previous run's pages are removed after. Without a
    /// staged page (the feed could not be read) the folder stays as it was.
    func commit() throws(LayoutError) {
        guard stagingCreated, !committed else { return }
        if access(target, F_OK) == 0 {
            guard fl_rename_exchange(staging, target) == 0 else {
                throw LayoutError(
                    .outputFailed, "--out \(target): cannot put the new pages in place: \(String(cString: strerror(errno)))")
            }
            committed = true
            // The previous pages now sit at the staging path.
            do {
                try FileManager.default.removeItem(atPath: staging)
            } catch {
                throw LayoutError(.outputFailed, "\(staging): cannot remove the previous pages: \(Self.reason(error))")
            }
        } else {
            guard rename(staging, target) == 0 else {
                throw LayoutError(
                    .outputFailed, "--out \(target): cannot put the new pages in place: \(String(cString: strerror(errno)))")
            }
            committed = true
        }
    }

    /// Opens and locks the lock file; retried when another run removed the file between the open and the lock
    /// (the lock must be on the file the path names now).
    private static func lock(_ path: String, naming folder: String) throws(LayoutError) -> Int32 {
        while true {
            let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else {
                throw LayoutError(.outputFailed, "--out \(folder): cannot create the lock \(path): \(String(cString: strerror(errno)))")
            }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                let code = errno
                close(descriptor)
                if code == EWOULDBLOCK {
                    throw LayoutError(
                        .outputFailed,
                        "--out \(folder): another feedlayout run is writing this folder; wait for it to end, or pass another --out")
                }
                throw LayoutError(.outputFailed, "--out \(folder): cannot lock \(path): \(String(cString: strerror(code)))")
            }
            var held = stat()
            var named = stat()
            if fstat(descriptor, &held) == 0, stat(path, &named) == 0, held.st_ino == named.st_ino,
                held.st_dev == named.st_dev
            {
                return descriptor
            }
            close(descriptor)
        }
    }

    /// Removes the lock file, then releases the lock: a run waiting on the old file sees it gone and retries.
    private static func unlock(_ path: String, _ descriptor: Int32) {
        unlink(path)
        close(descriptor)
    }

    /// The system's words for a file error (Foundation's own say only "error 512").
    static func reason(_ error: any Error) -> String {
        if let posix = error as? POSIXError { return String(cString: strerror(posix.code.rawValue)) }
        let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
        if let underlying, underlying.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(underlying.code))) }
        return error.localizedDescription
    }
}
