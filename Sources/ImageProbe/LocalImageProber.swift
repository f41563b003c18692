import LocalFileAccess

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Probes image files on the local file system (or standard input) by reading only their header.
///
/// The first read takes ``firstReadSize`` bytes (4 KiB by default), which holds the whole header
/// of nearly every web image. Camera JPEGs carry an Exif segment of tens of kilobytes before the
/// frame header; their second read fetches through the end of that segment in one go, so a
/// larger first read would not save a read, only copy more bytes for everyone else. On a
/// corpus of 1,677 local files the time per probe is dominated by open/read/close, not parsing
/// (about 50 ns per JPEG header). Only when ``ImageHeaderParser`` asks for more does the
/// prober read again, at least doubling what it holds, so a long run of APPn segments costs a
/// few reads rather than one per segment. In a regular file, a segment or chunk of 32 KiB or
/// more that the parser skips by length is not read at all but seeked over (some camera and
/// stock JPEGs carry megabytes of XMP before the frame header).
///
/// Every file is opened through ``gate``: a prober for a feed's images gets a gate confined to the feed's folders,
/// so the paths a feed names cannot lead it anywhere else, nor to a FIFO or device.
public struct LocalImageProber: Sendable {
    /// Which files may be opened: ``LocalFileGate/anyFile`` (paths a person named) unless set.
    public var gate: LocalFileGate = .anyFile
    /// How many bytes the first read asks for.
    public var firstReadSize: Int
    /// The most bytes the prober will read from one input before giving up on its header.
    public var maximumHeaderSize: Int

    /// Creates a prober with a 4 KiB first read and a 64 MiB header limit.
    public init() {
        self.init(firstReadSize: 4 * 1024, maximumHeaderSize: 64 * 1024 * 1024)
    }

    /// Creates a prober with explicit read sizes.
    /// - Parameters:
    ///   - firstReadSize: Bytes of the first read (at least 16 are used).
    ///   - maximumHeaderSize: Past this many bytes the header is considered missing.
    public init(firstReadSize: Int, maximumHeaderSize: Int) {
        self.firstReadSize = max(16, firstReadSize)
        self.maximumHeaderSize = max(self.firstReadSize, maximumHeaderSize)
    }

    /// Reads the header of one image.
    ///
    /// - Parameter path: A file path, or `-` for standard input.
    /// - Returns: The header's description; ``ImageInfo/bytesRead`` is what was read from the file.
    /// - Throws: ``ImageProbeError`` with `source` set to `path`: `.notFound`, `.unreadable`, or
    ///   the parser's error (`.unknownFormat`, `.truncated`, `.invalidHeader`, ...).
    public func probe(path: String) throws(ImageProbeError) -> ImageInfo {
        let descriptor = try openForReading(path)
        defer { if !gate.isStandardInput(path) { close(descriptor) } }
        return try probe(fileDescriptor: descriptor, source: path)
    }

    /// Reads the header of one image from an open file, pipe or socket.
    ///
    /// Reading starts at the descriptor's current position and stops as soon as the header is
    /// known; the descriptor is left open and positioned after the bytes read.
    ///
    /// - Parameters:
    ///   - descriptor: A readable file descriptor.
    ///   - source: The name used in errors, such as the path or `-`.
    /// - Returns: The header's description; ``ImageInfo/bytesRead`` is what was read.
    /// - Throws: ``ImageProbeError`` with `source` set: `.unreadable`, or the parser's error.
    public func probe(fileDescriptor descriptor: Int32, source path: String) throws(ImageProbeError) -> ImageInfo {
        // malloc/realloc rather than an Array: growing a large block is a page remap in glibc,
        // so the bytes of a skipped gap are never copied or even touched.
        var capacity = firstReadSize
        guard var storage = malloc(capacity) else { throw outOfMemory(path, capacity) }
        defer { free(storage) }
        func reserve(_ needed: Int) throws(ImageProbeError) {
            guard needed > capacity else { return }
            guard let grown = realloc(storage, needed) else { throw outOfMemory(path, needed) }
            (storage, capacity) = (grown, needed)
        }

        var filled = 0
        var bytesFromFile = 0
        var isComplete = false
        var wanted = firstReadSize
        // Where the first buffered byte is in the file and how long the file is; learnt at the
        // first skip, `.some(nil)` when the descriptor cannot seek.
        var seekableExtent: (start: Int, size: Int)??
        while true {
            try reserve(wanted)
            // A short read ends the block: it usually means the end of a small file, and the parser may
            // not need more. If it does, the next read says whether the input has ended. (Reading on
            // to find out first cost a system call per file under 4 KiB.)
            while filled < wanted && !isComplete {
                let result = read(descriptor, storage + filled, wanted - filled)
                if result > 0 {
                    filled += result
                    bytesFromFile += result
                    if filled < wanted { break }
                } else if result == 0 {
                    isComplete = true
                } else if errno != EINTR {
                    let error = errno
                    throw ImageProbeError(
                        code: .unreadable,
                        message: "reading failed at byte \(filled) (\(systemMessage(error))); "
                            + (error == EISDIR ? "give a file, not a directory" : "check the disk or the file"),
                        source: path, offset: filled)
                }
            }
            var unexamined: Range<Int>?
            let result = ImageHeaderParser.parse(
                UnsafeRawBufferPointer(start: storage, count: filled), isComplete: isComplete, unexamined: &unexamined)
            switch result {
            case .info(var info):
                info.bytesRead = bytesFromFile
                return info
            case .failure(let error):
                throw error.attributed(to: path)
            case .needMoreBytes(let atLeast):
                // The parser never asks for more once told the input is complete; stay safe anyway.
                guard !isComplete else {
                    throw ImageProbeError(
                        code: .truncated, message: "the file ends at byte \(filled), inside its header; copy it again",
                        source: path, offset: filled)
                }
                guard atLeast <= maximumHeaderSize else {
                    throw ImageProbeError(
                        code: .invalidHeader,
                        message: "the header continues past \(maximumHeaderSize) bytes (it asks for \(atLeast)); "
                            + "the file is damaged or hides its header behind huge metadata",
                        source: path, offset: filled)
                }
                wanted = min(maximumHeaderSize, max(atLeast, 2 * filled))
                guard let gap = unexamined, gap.lowerBound == filled, gap.count >= minimumSkip else { continue }
                if seekableExtent == nil { seekableExtent = regularFileExtent(descriptor, bufferedBytes: filled) }
                guard let extent = seekableExtent ?? nil, extent.start + gap.upperBound <= extent.size,
                    lseek(descriptor, off_t(extent.start + gap.upperBound), SEEK_SET) >= 0
                else { continue }
                // The gap stays uninitialised: the parser never looks at it. Only a little is read
                // after it, since skipped segments tend to come in runs.
                filled = gap.upperBound
                wanted = min(maximumHeaderSize, max(atLeast, filled + afterSkipReadSize))
            }
        }
    }

    private func outOfMemory(_ path: String, _ size: Int) -> ImageProbeError {
        ImageProbeError(
            code: .unreadable, message: "cannot allocate \(size) bytes for the header; free some memory", source: path)
    }

    /// Skipping a gap by seeking costs a system call; below this size reading it is cheaper.
    private var minimumSkip: Int { 32 * 1024 }

    /// How much is read after a skipped gap: enough for the next few segment headers.
    private var afterSkipReadSize: Int { 512 }

    /// For a regular file, the file offset of the first buffered byte and the file's size, so
    /// gaps can be seeked over — but never past the end, so a truncated file is still read, and
    /// reported, as truncated. `nil` for pipes, sockets and devices.
    private func regularFileExtent(_ descriptor: Int32, bufferedBytes: Int) -> (start: Int, size: Int)? {
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        let position = lseek(descriptor, 0, SEEK_CUR)
        guard position >= 0 else { return nil }
        return (Int(position) - bufferedBytes, Int(status.st_size))
    }

    /// Opens a file for reading through the gate; `-` is standard input (for ``LocalFileGate/anyFile``), which the
    /// caller must not close.
    func openForReading(_ path: String) throws(ImageProbeError) -> Int32 {
        do {
            return try gate.open(path)
        } catch {
            throw ImageProbeError(refusal: error)
        }
    }

    private func systemMessage(_ error: Int32) -> String {
        guard let text = strerror(error) else { return "errno \(error)" }
        return String(cString: text)
    }
}

extension ImageProbeError {
    /// The file gate's refusal as a probe error naming the same path: not found, unreadable, or (outside the allowed
    /// folders, not a regular file) refused.
    public init(refusal: LocalFileRefusal) {
        let code: Code =
            switch refusal.code {
            case .notFound: .notFound
            case .unreadable: .unreadable
            default: .refused
            }
        self.init(code: code, message: refusal.reason, source: refusal.path)
    }
}
