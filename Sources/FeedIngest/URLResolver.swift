internal import CFeedLayoutShims
import LocalFileAccess

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Resolves link and image references the way the feed meant them, and keeps local ones inside
/// the allowed directories.
///
/// As XML Base and RFC 3986 say: a relative reference resolves against the nearest `xml:base` in
/// scope (itself resolved the same way), else against the feed document's own location (RFC 3986
/// section 5.1.3), never against an item's `<link>`. Remote feeds: that location is the feed's URL
/// after redirects (via libxml2's `xmlBuildURI`); protocol-relative references take its scheme.
/// Local feeds: it is the feed's file, so a reference that stays relative names a file relative to
/// the feed's directory (or, when no such file exists there, to `imageRoot`); it must stay inside that
/// directory or `imageRoot` (after `..` and symbolic links: the roots of the same ``LocalFileGate``
/// that later opens the file), or it is refused. A remote feed names local files (`file:` URLs) only
/// inside `imageRoot`, and none without one.
struct URLResolver {
    /// The feed's own URL, when it was fetched over http(s): the base of last resort.
    let feedURL: String?
    /// The feed's directory (absolute, normalised), when it is a local file.
    let feedDirectory: String?
    /// An extra allowed directory (absolute, normalised).
    let imageRoot: String?
    /// The allowed roots, each with its physical path (symbolic links followed), found once: the same
    /// gate the stages that read the files open them through.
    private let gate: LocalFileGate
    /// Local images by path and reference: a feed shows the same few photos many times, and each
    /// answer costs a normalisation and an `lstat`.
    private let localImages = BoundedMemo<LocalImageKey, ResolvedImage>(limit: 4096)
    private struct LocalImageKey: Hashable {
        var absolutePath: String
        var reference: String
    }

    init(feedURL: String?, feedDirectory: String?, imageRoot: String?) {
        self.feedURL = feedURL.flatMap { Self.isHTTP($0) ? $0 : nil }
        self.feedDirectory = feedDirectory.map { LocalFileGate.absoluteNormalised($0) }
        self.imageRoot = imageRoot.map { LocalFileGate.absoluteNormalised($0) }
        gate = LocalFileGate.forFeed(directory: self.feedDirectory, imageRoot: self.imageRoot)
    }

    /// An image reference after resolution.
    struct ResolvedImage {
        var url: String
        var localPath: String?
        var refusal: String?
        /// For a local file: whether something exists at its path (`nil` when not a local file).
        var exists: Bool?
    }

    /// Resolves a link or `xml:base` value against its base, else the feed's own URL.
    /// - Parameters:
    ///   - reference: the value as written.
    ///   - base: the `xml:base` in effect, if any.
    /// - Returns: the absolute URL when a base allowed it, else the reference (trimmed).
    func resolveLink(_ reference: String, base: String?) -> String {
        let trimmed = reference.trimmingASCIIWhitespace()
        if trimmed.isEmpty || Self.schemeLength(of: trimmed) != nil { return trimmed }
        let base = base ?? feedURL
        if trimmed.hasPrefix("//") {
            return (base.flatMap { Self.scheme(of: $0) }.map { $0 == "http" ? "http" : "https" } ?? "https") + ":"
                + trimmed
        }
        guard let base, Self.schemeLength(of: base) != nil else {
            // Both relative (a relative xml:base in a local feed): join the paths.
            if let base, !trimmed.hasPrefix("/") { return Self.directoryPart(of: base) + trimmed }
            return trimmed
        }
        return Self.buildURI(trimmed, base: base) ?? trimmed
    }

    /// Resolves an image reference; local files are checked against the allowed roots.
    func resolveImage(_ reference: String, base: String?) -> ResolvedImage {
        let resolved = resolveLink(reference, base: base)
        // What kind of reference it is, decided once: an absolute URL, and of those a file: one.
        let isAbsolute = Self.schemeLength(of: resolved) != nil
        let isFile = isAbsolute && Self.hasScheme(resolved, "file")
        if feedURL != nil && feedDirectory == nil {
            // A feed fetched over http(s) must not make this machine read its own files, except inside an image
            // root the person running it named.
            if !isAbsolute || (isFile && imageRoot == nil) {
                return ResolvedImage(
                    url: reference,
                    refusal: "local image '\(reference)' in a feed fetched from \(feedURL!); "
                        + "local files are not read for a remote feed")
            }
            if !isFile { return ResolvedImage(url: resolved) }
        }
        if isAbsolute {
            if isFile {
                var path = String(resolved.dropFirst("file:".count))
                if path.hasPrefix("//") {
                    // file://host/path: only an empty host or localhost names this machine.
                    let afterSlashes = path.dropFirst(2)
                    guard let slash = afterSlashes.firstIndex(of: "/") else {
                        return ResolvedImage(url: reference, refusal: "file URL without a path")
                    }
                    let host = afterSlashes[..<slash]
                    guard host.isEmpty || host == "localhost" else {
                        return ResolvedImage(url: reference, refusal: "file URL on another host")
                    }
                    path = String(afterSlashes[slash...])
                }
                return localImage(absolutePath: Self.percentDecoded(path), reference: reference)
            }
            return ResolvedImage(url: resolved)
        }
        let decoded = Self.percentDecoded(Self.stripQueryAndFragment(resolved))
        guard let feedDirectory else {
            // A feed from standard input or memory has no folder: a relative reference names a file under the image
            // root when there is one, and is reported as written when there is none.
            guard let imageRoot, !decoded.hasPrefix("/"), !Self.climbsAbove(decoded) else {
                return ResolvedImage(url: resolved)
            }
            return localImage(absolutePath: imageRoot + "/" + decoded, reference: reference)
        }
        if decoded.hasPrefix("/") { return localImage(absolutePath: decoded, reference: reference) }
        let beside = localImage(absolutePath: feedDirectory + "/" + decoded, reference: reference)
        // Beside the feed first; a file that is not there may be under the image root, if the reference names a
        // path below it ("../x" is relative to the feed, never a way up from the root).
        if let imageRoot, beside.exists == false, !Self.climbsAbove(decoded) {
            let underRoot = localImage(absolutePath: imageRoot + "/" + decoded, reference: reference)
            if underRoot.exists == true { return underRoot }
        }
        return beside
    }

    private func localImage(absolutePath: String, reference: String) -> ResolvedImage {
        localImages.value(for: LocalImageKey(absolutePath: absolutePath, reference: reference)) {
            checkedLocalImage(absolutePath: absolutePath, reference: reference)
        }
    }

    private func checkedLocalImage(absolutePath: String, reference: String) -> ResolvedImage {
        let lexical = LocalFileGate.absoluteNormalised(absolutePath)
        // Follow symbolic links when the file exists, so a link cannot lead outside the root.
        let physical = LocalFileGate.physicalPath(lexical)
        if let (root, physicalRelative) = gate.root(containing: physical ?? lexical) {
            let relative = LocalFileGate.relativePath(lexical, inside: root.path) ?? physicalRelative
            return ResolvedImage(url: relative, localPath: lexical, exists: physical != nil)
        }
        let folders =
            feedDirectory == nil
            ? "the image root" : imageRoot == nil ? "the feed's directory" : "the feed's directory and the image root"
        return ResolvedImage(
            url: reference,
            refusal: "local image '\(reference)' is outside \(folders); it is kept as written but not read",
            exists: physical != nil)
    }

    // MARK: Helpers

    static func isHTTP(_ text: String) -> Bool {
        hasScheme(text, "http") || hasScheme(text, "https")
    }

    /// Whether `text` has this (lowercase) scheme, compared in place: making the scheme a String
    /// for the comparison was most of the check.
    static func hasScheme(_ text: String, _ scheme: StaticString) -> Bool {
        guard schemeLength(of: text) == scheme.utf8CodeUnitCount else { return false }
        for (index, byte) in text.utf8.prefix(scheme.utf8CodeUnitCount).enumerated() {
            let lowered = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
            if lowered != scheme.utf8Start[index] { return false }
        }
        return true
    }

    /// The lowercased scheme (`http`, `file`, `data`), or nil for a relative reference.
    static func scheme(of text: String) -> String? {
        guard let length = schemeLength(of: text) else { return nil }
        // ASCII only: lowercasing the bytes is the whole job.
        return String(
            decoding: text.utf8.prefix(length).map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    /// The length of the scheme before the first `:`, or nil for a relative reference.
    static func schemeLength(of text: String) -> Int? {
        // Several times per image URL: on the contiguous bytes when the string has them (native strings do).
        if let length = text.utf8.withContiguousStorageIfAvailable({ schemeLength(of: $0) }) { return length }
        return schemeLength(of: text.utf8)
    }

    private static func schemeLength(of utf8: some Sequence<UInt8>) -> Int? {
        var length = 0
        for character in utf8 {
            if character == UInt8(ascii: ":") { return length > 0 ? length : nil }
            let isLetter = (character | 0x20) >= 0x61 && (character | 0x20) <= 0x7A
            let isOther =
                (character >= 0x30 && character <= 0x39) || character == 0x2B || character == 0x2D || character == 0x2E
            guard isLetter || (length > 0 && isOther) else { return nil }
            length += 1
        }
        return nil
    }

    static func buildURI(_ reference: String, base: String) -> String? {
        // xmlBuildURI refuses raw spaces; feeds have them.
        let escapedReference = reference.replacingSpaces()
        let escapedBase = base.replacingSpaces()
        guard let built = fl_xml_build_uri(escapedReference, escapedBase) else { return nil }
        defer { fl_xml_free(built) }
        return String(cString: built)
    }

    static func directoryPart(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return String(path[...slash])
    }

    static func stripQueryAndFragment(_ reference: String) -> String {
        var bytesOf = reference
        // On UTF-8 bytes ('?' and '#' are ASCII), in place: a Character walk was 4 % of a whole ingest, and the
        // UTF-8 view's own walk 1 % of ingesting an RSS 1.0 feed.
        let stripped = bytesOf.withUTF8 { bytes -> String? in
            guard let cut = queryOrFragmentStart(bytes) else { return nil }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[..<cut]), as: UTF8.self)
        }
        return stripped ?? reference
    }

    /// Where a reference's query or fragment starts (its first `?` or `#`), if it has one.
    static func queryOrFragmentStart(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        bytes.firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
    }

    static func percentDecoded(_ text: String) -> String {
        // On UTF-8 bytes: `contains("%")` walked the text Character by Character (3 % of ingesting the Atom shape).
        guard text.utf8.contains(UInt8(ascii: "%")) else { return text }
        var bytes: [UInt8] = []
        let source = Array(text.utf8)
        var index = 0
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case 0x30...0x39: return byte - 0x30
            case 0x41...0x46: return byte - 0x41 + 10
            case 0x61...0x66: return byte - 0x61 + 10
            default: return nil
            }
        }
        while index < source.count {
            if source[index] == UInt8(ascii: "%"), index + 2 < source.count,
                let high = hex(source[index + 1]), let low = hex(source[index + 2])
            {
                bytes.append(high << 4 | low)
                index += 3
            } else {
                bytes.append(source[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether a relative path leads above the folder it is relative to (more `..` than names before them).
    static func climbsAbove(_ relativePath: String) -> Bool {
        var depth = 0
        for component in relativePath.split(separator: "/", omittingEmptySubsequences: true) {
            if component == ".." {
                depth -= 1
                if depth < 0 { return true }
            } else if component != "." {
                depth += 1
            }
        }
        return false
    }
}

/// Answers remembered for one resolver's lifetime (one reader's or one finisher's), at most `limit`
/// of them: a hostile feed can name any number of paths, so past the limit it starts over.
final class BoundedMemo<Key: Hashable, Value> {
    private var entries: [Key: Value] = [:]
    private let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    func value(for key: Key, compute: () -> Value) -> Value {
        if let known = entries[key] { return known }
        let value = compute()
        if entries.count >= limit { entries.removeAll(keepingCapacity: true) }
        entries[key] = value
        return value
    }
}

extension String {
    fileprivate func replacingSpaces() -> String {
        guard contains(" ") else { return self }
        return split(separator: " ", omittingEmptySubsequences: false).joined(separator: "%20")
    }
}
