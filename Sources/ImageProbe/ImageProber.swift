import Dispatch
import RemoteFetch

/// Probes any image source the CLI accepts: a file path, `-` for standard input, or an http(s) URL.
///
/// Header probing of files is a few system calls and runs inline; pixel decoding (``verifyDecodable(_:options:)``,
/// ``placeholder(_:options:)``) is CPU-bound C work that may also wait for its share of the decoding memory budget
/// (``DecodeMemoryBudget``), so it runs on Dispatch's threads, never on the Swift cooperative pool: a long decode
/// cannot stall network I/O or the other probes.
public struct ImageProber: Sendable {
    /// Reads files and standard input.
    public var local: LocalImageProber
    /// Reads http(s) URLs; `nil` refuses them.
    public var remote: RemoteImageProber?

    /// Creates a prober.
    /// - Parameters:
    ///   - local: The file prober.
    ///   - remote: The URL prober, or `nil` to refuse URLs.
    public init(local: LocalImageProber = LocalImageProber(), remote: RemoteImageProber?) {
        self.local = local
        self.remote = remote
    }

    /// Whether a source is an http(s) URL.
    ///
    /// Asked several times per input, so a source whose first byte cannot begin "http" in any case
    /// (every path starting with / or .) is answered without lowercasing a copy of its prefix.
    public static func isRemote(_ source: String) -> Bool {
        guard let first = source.utf8.first, first == UInt8(ascii: "h") || first == UInt8(ascii: "H") || first >= 0x80
        else { return false }
        return RemoteFetcher.isRemote(source)
    }

    /// Reads the header of one image.
    /// - Parameter source: A path, `-`, or an http(s) URL.
    /// - Returns: The header's description.
    /// - Throws: ``ImageProbeError`` naming `source`.
    public func probe(_ source: String) async throws(ImageProbeError) -> ImageInfo {
        if Self.isRemote(source) {
            return try await remoteProber(for: source).probe(url: source)
        }
        return try local.probe(path: source)
    }

    /// Decodes a whole JPEG or PNG to check that it is sound; see ``ImagePixelDecoder/verifyDecodable(_:source:options:)``.
    /// - Parameters:
    ///   - source: A path, `-`, or an http(s) URL.
    ///   - options: Pixel budget, scan cap, JPEG scaling.
    ///   - header: The header, when already probed: a URL then costs one request fewer.
    /// - Returns: What the decode found.
    /// - Throws: ``ImageProbeError`` naming `source`.
    public func verifyDecodable(
        _ source: String, options: PixelDecodeOptions = PixelDecodeOptions(), header: ImageInfo? = nil
    ) async throws(ImageProbeError) -> PixelDecodeReport {
        if Self.isRemote(source) {
            let bytes = try await downloadWithinBudget(source, options: options, header: header)
            return try await Self.runBlocking { () throws(ImageProbeError) in
                try bytes.withUnsafeBytes { raw in
                    Result { () throws(ImageProbeError) in
                        try ImagePixelDecoder.verifyDecodable(raw, source: source, options: options)
                    }
                }.get()
            }
        }
        let local = self.local
        return try await Self.runBlocking { () throws(ImageProbeError) in
            try local.verifyDecodable(path: source, options: options)
        }
    }

    /// Builds an image's placeholder (average colour and ThumbHash); see ``ImagePixelDecoder/placeholder(_:source:options:)``.
    /// - Parameters:
    ///   - source: A path, `-`, or an http(s) URL.
    ///   - options: Pixel budget and scan cap.
    ///   - header: The header, when already probed: a URL then costs one request fewer.
    /// - Returns: The placeholder.
    /// - Throws: ``ImageProbeError`` naming `source`.
    public func placeholder(
        _ source: String, options: PixelDecodeOptions = PixelDecodeOptions(), header: ImageInfo? = nil
    ) async throws(ImageProbeError) -> ImagePlaceholder {
        if Self.isRemote(source) {
            let bytes = try await downloadWithinBudget(source, options: options, header: header)
            return try await Self.runBlocking { () throws(ImageProbeError) in
                try bytes.withUnsafeBytes { raw in
                    Result { () throws(ImageProbeError) in
                        try ImagePixelDecoder.placeholder(raw, source: source, options: options)
                    }
                }.get()
            }
        }
        let local = self.local
        return try await Self.runBlocking { () throws(ImageProbeError) in
            try local.placeholder(path: source, options: options)
        }
    }

    /// Probes first so that an image above the pixel budget costs only a range request, then downloads it.
    private func downloadWithinBudget(
        _ url: String, options: PixelDecodeOptions, header: ImageInfo?
    ) async throws(ImageProbeError) -> [UInt8] {
        let remote = try remoteProber(for: url)
        let info: ImageInfo
        if let header { info = header } else { info = try await remote.probe(url: url) }
        try info.checkPixelBudget(options.pixelBudget, source: url)
        return try await remote.download(url: url)
    }

    private func remoteProber(for url: String) throws(ImageProbeError) -> RemoteImageProber {
        guard let remote else {
            throw ImageProbeError(
                code: .refused,
                message: "remote images are not fetched in this configuration; download the image first",
                source: url)
        }
        return remote
    }

    /// Runs blocking work on a Dispatch thread and waits for it without holding a cooperative thread.
    static func runBlocking<Value: Sendable>(
        _ work: @escaping @Sendable () throws(ImageProbeError) -> Value
    ) async throws(ImageProbeError) -> Value {
        let result: Result<Value, ImageProbeError> = await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(returning: Result { () throws(ImageProbeError) in try work() })
            }
        }
        return try result.get()
    }
}
