#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
import Synchronization

/// Which local files may be read, and the one way they are opened.
///
/// Every stage that reads a local file a feed named (probing, placeholders, both previews) opens it here, so no
/// stage can forget the check or check one path and open another. A confined gate lets through only regular files
/// inside its roots: the path is resolved (`..`, symbolic links) with `realpath`, the physical path must lie in a
/// root's physical path, and the file is opened non-blocking (a FIFO or device named as an image must not stall the
/// run) and checked on the open descriptor: `fstat` must say regular file, and the kernel's name for the descriptor
/// must still lie in a root, so a link swapped in between the check and the open is caught.
///
/// Percent-decoding and `file:` URLs belong to whoever turns a reference into a path (the feed reader); the gate
/// sees paths only, so `%2e%2e` arrives here as `..` or not at all.
public struct LocalFileGate: Sendable, Hashable {
    /// An allowed folder: absolute and normalised as given, and its physical path (symbolic links resolved).
    public struct Root: Sendable, Hashable {
        /// The folder as given, absolute, without `.`, `..` or `//`.
        public let path: String
        /// The folder with its symbolic links resolved (the given path when it does not exist).
        public let physicalPath: String
    }

    private enum Scope: Sendable, Hashable {
        /// Paths a person named: any file they can open, pipes and standard input included.
        case anyFile
        /// Paths a person named, for readers that need a seekable file: any regular file.
        case anyRegularFile
        /// Paths a document named: regular files inside the roots only.
        case confined([Root])
    }

    private let scope: Scope

    /// For paths the person running the command typed (`probe FILE…`): any file they can open, FIFOs and
    /// `/dev/fd/N` from a shell's process substitution included. Never for paths that come from a feed.
    public static let anyFile = LocalFileGate(scope: .anyFile)

    /// For files a person named that must be regular files (font files: FreeType seeks, and a FIFO would block
    /// it): any regular file, wherever it is.
    public static let anyRegularFile = LocalFileGate(scope: .anyRegularFile)

    /// Lets nothing local through: for a feed from a server with no image root.
    public static let noLocalFiles = LocalFileGate(scope: .confined([]))

    private init(scope: Scope) { self.scope = scope }

    /// A gate that lets through regular files inside `roots` (relative roots are taken from the working folder).
    /// - Parameter roots: The allowed folders.
    public init(roots: [String]) {
        var unique: [Root] = []
        for root in roots {
            let path = Self.absoluteNormalised(root)
            let entry = Root(path: path, physicalPath: Self.realPath(path) ?? path)
            if !unique.contains(entry) { unique.append(entry) }
        }
        scope = .confined(unique)
    }

    /// The gate for the images of one feed: a local feed's folder and the image root, or, for a feed from a
    /// server (`feedDirectory` `nil`), the image root alone, so a remote feed never reads this machine's files
    /// unless the person running it named a folder for that.
    /// - Parameters:
    ///   - feedDirectory: The local feed's folder, or `nil` for a remote feed.
    ///   - imageRoot: `--image-root`, if given.
    public static func forFeed(directory feedDirectory: String?, imageRoot: String?) -> LocalFileGate {
        LocalFileGate(roots: [feedDirectory, imageRoot].compactMap { $0 })
    }

    /// The allowed folders; empty for ``anyFile`` and ``anyRegularFile`` (and for ``noLocalFiles``).
    public var roots: [Root] {
        if case .confined(let roots) = scope { return roots }
        return []
    }

    /// Whether the gate confines reads to its roots (a feed's images), or takes any path a person named.
    public var isConfined: Bool {
        if case .confined = scope { return true }
        return false
    }

    /// The root a physical path lies strictly inside, and the path relative to it; `nil` when it lies in none.
    /// - Parameter physicalPath: An absolute path with no symbolic links (from `realpath`).
    public func root(containing physicalPath: String) -> (root: Root, relativePath: String)? {
        for root in roots {
            if let relative = Self.relativePath(physicalPath, inside: root.physicalPath) { return (root, relative) }
        }
        return nil
    }

    /// Checks a path without opening it: where it leads, and whether that is inside a root. For readers that
    /// answer from what they know about a path (a cache keyed by path) before deciding to open it.
    /// - Parameter path: The file.
    /// - Returns: The physical path (symbolic links resolved); the path as given for ``anyFile``.
    /// - Throws: ``LocalFileRefusal`` naming `path`: not found, outside the roots, or not a regular file.
    public func admit(_ path: String) throws(LocalFileRefusal) -> String {
        if case .anyFile = scope { return path }
        let physical = try admitPath(path)
        var status = stat()
        guard stat(physical, &status) == 0 else { throw LocalFileRefusal.openFailed(path, errno: errno) }
        try Self.checkRegular(status, path)
        return physical
    }

    /// Whether `open` hands out standard input for this path (which the caller must not close): `-` through
    /// ``anyFile`` only.
    public func isStandardInput(_ path: String) -> Bool {
        if case .anyFile = scope { return path == "-" }
        return false
    }

    /// Opens a file for reading, if the gate lets it through.
    ///
    /// - Parameter path: The file (`-` is standard input, for ``anyFile`` only; the caller must not close it).
    /// - Returns: A descriptor open for reading, which the caller closes.
    /// - Throws: ``LocalFileRefusal`` naming `path`: not found, unreadable, outside the roots, or not a regular
    ///   file. Its message names the path and the reason, never anything read from the file.
    public func open(_ path: String) throws(LocalFileRefusal) -> Int32 {
        switch scope {
        case .anyFile:
            if path == "-" { return STDIN_FILENO }
            return try Self.openDescriptor(path, flags: O_RDONLY | O_CLOEXEC, name: path)
        case .anyRegularFile:
            let descriptor = try Self.openDescriptor(path, flags: Self.regularFileFlags, name: path)
            try Self.closing(descriptor) { () throws(LocalFileRefusal) in try Self.checkRegular(descriptor, path) }
            return descriptor
        case .confined:
            let physical = try admitPath(path)
            // O_NOFOLLOW: the physical path has no link in its last component; one swapped in since is refused.
            let descriptor = try Self.openDescriptor(physical, flags: Self.regularFileFlags | O_NOFOLLOW, name: path)
            try Self.closing(descriptor) { () throws(LocalFileRefusal) in
                try Self.checkRegular(descriptor, path)
                // A folder on the way may have been swapped for a link between realpath and open: ask the kernel
                // what was opened.
                if let opened = Self.openedPath(descriptor), root(containing: opened) == nil {
                    throw refusalOutsideRoots(path)
                }
            }
            return descriptor
        }
    }

    /// Reads a whole file the gate lets through.
    /// - Parameters:
    ///   - path: The file.
    ///   - maximumBytes: A larger file is refused unread.
    /// - Returns: Its bytes.
    /// - Throws: ``LocalFileRefusal`` naming `path`.
    public func read(_ path: String, maximumBytes: Int = 1 << 30) throws(LocalFileRefusal) -> [UInt8] {
        let descriptor = try open(path)
        defer { if !isStandardInput(path) { close(descriptor) } }
        return try Self.readAll(descriptor, path: path, maximumBytes: maximumBytes)
    }

    /// Reads an open descriptor from its current position to the end.
    /// - Parameters:
    ///   - descriptor: A descriptor the gate opened (see ``open(_:)``).
    ///   - path: The name errors use.
    ///   - maximumBytes: A larger file is refused (a regular file unread).
    /// - Throws: ``LocalFileRefusal`` naming `path`.
    public static func readAll(_ descriptor: Int32, path: String, maximumBytes: Int = 1 << 30) throws(LocalFileRefusal)
        -> [UInt8]
    {
        var status = stat()
        if fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, Int(status.st_size) > maximumBytes {
            throw LocalFileRefusal(
                code: .unreadable, path: path,
                reason: "the file holds \(status.st_size) bytes, more than the \(maximumBytes) read for one file")
        }
        var bytes: [UInt8] = []
        // A regular file's size is known: room for it at once, so a large file is not copied as the array grows.
        if status.st_mode & S_IFMT == S_IFREG { bytes.reserveCapacity(Int(status.st_size)) }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                bytes.append(contentsOf: chunk[..<count])
                if bytes.count > maximumBytes {
                    throw LocalFileRefusal(
                        code: .unreadable, path: path, reason: "the file holds more than \(maximumBytes) bytes")
                }
            } else if count == 0 {
                return bytes
            } else if errno != EINTR {
                let error = errno
                throw LocalFileRefusal(
                    code: .unreadable, path: path,
                    reason: "reading failed at byte \(bytes.count) (\(LocalFileRefusal.systemMessage(error)))")
            }
        }
    }

    // MARK: The checks

    /// Where a path leads, and, for a confined gate, that it lies inside a root.
    private func admitPath(_ path: String) throws(LocalFileRefusal) -> String {
        guard let physical = Self.physicalPath(path) else { throw LocalFileRefusal.openFailed(path, errno: errno) }
        if case .confined = scope, root(containing: physical) == nil { throw refusalOutsideRoots(path) }
        return physical
    }

    private func refusalOutsideRoots(_ path: String) -> LocalFileRefusal {
        let roots = self.roots
        return LocalFileRefusal(
            code: .outsideAllowedFolders, path: path,
            reason: roots.isEmpty
                ? "no local files are read for this feed (it was not read from a local folder and no --image-root was given)"
                : "outside the folders images are read from (\(roots.map(\.path).joined(separator: ", "))), "
                    + "after following '..' and symbolic links")
    }

    /// Non-blocking, so that opening a FIFO does not wait for a writer; no controlling terminal from a tty.
    private static let regularFileFlags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY

    private static func openDescriptor(_ path: String, flags: Int32, name: String) throws(LocalFileRefusal) -> Int32 {
        while true {
            let descriptor = systemOpen(path, flags)
            if descriptor >= 0 { return descriptor }
            if errno != EINTR { throw LocalFileRefusal.openFailed(name, errno: errno) }
        }
    }

    private static func closing(
        _ descriptor: Int32, _ check: () throws(LocalFileRefusal) -> Void
    ) throws(LocalFileRefusal) {
        do throws(LocalFileRefusal) {
            try check()
        } catch {
            close(descriptor)
            throw error
        }
    }

    private static func checkRegular(_ descriptor: Int32, _ path: String) throws(LocalFileRefusal) {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw LocalFileRefusal.openFailed(path, errno: errno) }
        try checkRegular(status, path)
    }

    private static func checkRegular(_ status: stat, _ path: String) throws(LocalFileRefusal) {
        let kind: String
        switch status.st_mode & S_IFMT {
        case S_IFREG: return
        case S_IFDIR: kind = "a folder"
        case S_IFIFO: kind = "a named pipe (FIFO)"
        case S_IFCHR: kind = "a character device"
        case S_IFBLK: kind = "a block device"
        case S_IFSOCK: kind = "a socket"
        default: kind = "not a regular file"
        }
        throw LocalFileRefusal(
            code: .notRegularFile, path: path, reason: "\(kind), not a regular file; only regular files are read")
    }

    /// The kernel's name for what a descriptor opened (symbolic links resolved); `nil` where the system does not
    /// say (no `/proc`), and then the checks before the open stand alone.
    private static func openedPath(_ descriptor: Int32) -> String? {
        #if canImport(Darwin)
            var buffer = [CChar](repeating: 0, count: Int(MAXPATHLEN))
            guard fcntl(descriptor, F_GETPATH, &buffer) == 0 else { return nil }
            return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        #else
            var buffer = [CChar](repeating: 0, count: 4097)
            let count = readlink("/proc/self/fd/\(descriptor)", &buffer, buffer.count - 1)
            guard count > 0, count < buffer.count - 1 else { return nil }
            return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        #endif
    }

    // MARK: Paths

    /// Makes `path` absolute (against the working folder) and removes `.`, `..` and `//` without touching the
    /// file system.
    public static func absoluteNormalised(_ path: String) -> String {
        var full = path
        if !full.hasPrefix("/") {
            var buffer = [CChar](repeating: 0, count: 4096)
            let folder =
                getcwd(&buffer, buffer.count) != nil
                ? String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self) : "/"
            full = folder + "/" + full
        }
        var components: [Substring] = []
        for component in full.split(separator: "/", omittingEmptySubsequences: true) {
            if component == "." { continue }
            if component == ".." {
                if !components.isEmpty { components.removeLast() }
                continue
            }
            components.append(component)
        }
        return "/" + components.joined(separator: "/")
    }

    /// `realpath(3)` of a path, from the cached physical path of its folder when the path is absolute and
    /// normalised and the file itself is no symbolic link: the same answer with one `lstat` instead of one
    /// `readlink` per component (a `realpath` per image was a tenth of a local feed's layout). `nil` (errno set)
    /// when the file does not exist. A folder swapped for a link after it was cached is caught by ``open(_:)``'s
    /// check of the opened descriptor.
    public static func physicalPath(_ path: String) -> String? {
        guard path.hasPrefix("/"), absoluteNormalised(path) == path,
            let slash = path.utf8.lastIndex(of: UInt8(ascii: "/"))
        else { return realPath(path) }
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        if status.st_mode & S_IFMT == S_IFLNK { return realPath(path) }
        let folder = slash == path.utf8.startIndex ? "/" : String(path[..<slash])
        guard let physicalFolder = physicalFolders.value(for: folder) else { return realPath(path) }
        let name = path[path.utf8.index(after: slash)...]
        return physicalFolder == "/" ? "/" + name : physicalFolder + "/" + name
    }

    /// Folders' physical paths, for ``physicalPath(_:)``; at most a few thousand, then it starts over.
    private static let physicalFolders = PhysicalFolders()

    /// `realpath(3)`: the absolute path with `.`, `..` and every symbolic link resolved; `nil` (errno set) when
    /// some part does not exist or cannot be searched.
    public static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `path` relative to `root`, or `nil` when it is not strictly inside it.
    public static func relativePath(_ path: String, inside root: String) -> String? {
        let prefix = root.hasSuffix("/") ? root : root + "/"
        guard path.hasPrefix(prefix), path.utf8.count > prefix.utf8.count else { return nil }
        return String(path.dropFirst(prefix.count))
    }
}

/// Why ``LocalFileGate`` did not open a file. The message names the path and the reason, never bytes of the file.
public struct LocalFileRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of refusal; compare with `==` against the static members.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The file does not exist.
        public static let notFound = Code("notFound")
        /// The file exists but cannot be opened or read (permissions, I/O error).
        public static let unreadable = Code("unreadable")
        /// The path leads outside the allowed folders (after `..` and symbolic links).
        public static let outsideAllowedFolders = Code("outsideAllowedFolders")
        /// A folder, FIFO, device or socket: only regular files are read.
        public static let notRegularFile = Code("notRegularFile")

        public var description: String { name }
    }

    /// The kind of refusal.
    public var code: Code
    /// The path as it was asked for.
    public var path: String
    /// Why, without the path: for callers that name the file their own way (a feed's reference).
    public var reason: String
    /// `path: reason`.
    public var message: String { "\(path): \(reason)" }
    public var description: String { "\(code): \(message)" }

    /// Creates a refusal.
    public init(code: Code, path: String, reason: String) {
        self.code = code
        self.path = path
        self.reason = reason
    }

    static func openFailed(_ path: String, errno error: Int32) -> LocalFileRefusal {
        LocalFileRefusal(
            code: error == ENOENT || error == ENOTDIR ? .notFound : .unreadable, path: path,
            reason: "cannot open the file (\(systemMessage(error))); check the path and its permissions")
    }

    static func systemMessage(_ error: Int32) -> String {
        guard let text = strerror(error) else { return "errno \(error)" }
        return String(cString: text)
    }
}

/// The physical paths of folders, shared by every gate and resolver of the process: the images of a feed sit in
/// a handful of folders.
private final class PhysicalFolders: Sendable {
    private let entries = Mutex<[String: String]>([:])
    private static let limit = 4096

    func value(for folder: String) -> String? {
        if let known = entries.withLock({ $0[folder] }) { return known }
        guard let physical = LocalFileGate.realPath(folder) else { return nil }
        entries.withLock {
            if $0.count >= Self.limit { $0.removeAll(keepingCapacity: true) }
            $0[folder] = physical
        }
        return physical
    }
}

/// `open(2)` and `read(2)`, named so that they do not collide with the gate's own `open` and `read`.
private func systemOpen(_ path: String, _ flags: Int32) -> Int32 {
    #if canImport(Darwin)
        return Darwin.open(path, flags)
    #elseif canImport(Musl)
        return Musl.open(path, flags)
    #else
        return Glibc.open(path, flags)
    #endif
}

private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    #if canImport(Darwin)
        return Darwin.read(descriptor, buffer, count)
    #elseif canImport(Musl)
        return Musl.read(descriptor, buffer, count)
    #else
        return Glibc.read(descriptor, buffer, count)
    #endif
}
