import RemoteFetch

/// Probes images behind http(s) URLs by fetching only the start of each one.
///
/// The typical image costs one request: `Range: bytes=0-16383` holds the whole header of nearly
/// every web image (camera JPEGs with a big Exif segment need a second range). The body is
/// streamed and dropped as soon as ``ImageHeaderParser`` knows the answer, so a server that
/// ignores Range and sends the whole file is cut off after the header.
public struct RemoteImageProber: Sendable {
    /// The fetcher, whose configuration holds the timeouts, limits and private-network policy.
    public let fetcher: RemoteFetcher
    /// Bytes asked for by the first range request.
    public var firstRangeSize: Int

    /// Creates a prober over a fetcher (which the caller shuts down).
    /// - Parameters:
    ///   - fetcher: The fetcher to use.
    ///   - firstRangeSize: Bytes of the first range request (16 KiB by default: one round trip
    ///     costs far more than twelve extra kilobytes).
    public init(fetcher: RemoteFetcher, firstRangeSize: Int = 16 * 1024) {
        self.fetcher = fetcher
        self.firstRangeSize = max(16, firstRangeSize)
    }

    /// The result of probing with a validator from an earlier probe.
    public enum Outcome: Sendable {
        /// The header, and what the server said about the resource (its validator).
        case probed(ImageInfo, RemoteResource)
        /// The server confirmed the earlier version is current (HTTP 304).
        case notModified(RemoteResource)
    }

    /// Reads the header of the image at a URL.
    /// - Parameter url: An http(s) URL.
    /// - Returns: The header's description; ``ImageInfo/bytesRead`` is the body bytes received.
    /// - Throws: ``ImageProbeError`` naming the URL: the parser's errors, or `.refused`,
    ///   `.timeout`, `.httpStatus`, `.tooLarge`, `.network` for fetch failures.
    public func probe(url: String) async throws(ImageProbeError) -> ImageInfo {
        guard case .probed(let info, _) = try await probe(url: url, revalidating: nil) else {
            throw ImageProbeError(code: .network, message: "unexpected 304 to an unconditional request", source: url)
        }
        return info
    }

    /// Reads the header of the image at a URL, or confirms that a cached one is still current.
    ///
    /// With a validator the first range request is conditional; a 304 answers without a body.
    /// - Parameters:
    ///   - url: An http(s) URL.
    ///   - revalidating: The ETag / Last-Modified of the cached version, if any.
    /// - Returns: The header and the resource's validator, or `.notModified`.
    /// - Throws: ``ImageProbeError`` naming the URL.
    public func probe(url: String, revalidating: RemoteValidator?) async throws(ImageProbeError) -> Outcome {
        let outcome: PrefixFetchOutcome<ImageHeaderParseResult>
        do {
            outcome = try await fetcher.fetchPrefix(
                url, firstRangeSize: firstRangeSize, revalidating: revalidating?.isEmpty == false ? revalidating : nil
            ) { bytes, isComplete in
                switch ImageHeaderParser.parse(bytes, isComplete: isComplete) {
                case .needMoreBytes(let atLeast): .needMoreBytes(atLeast: atLeast)
                case let result: .finished(result)
                }
            }
        } catch {
            throw Self.imageProbeError(error)
        }
        switch outcome {
        case .notModified(let resource):
            return .notModified(resource)
        case .fetched(.info(var info), let resource):
            info.bytesRead = resource.bytesReceived
            return .probed(info, resource)
        case .fetched(.failure(let error), _):
            throw error.attributed(to: url)
        case .fetched(.needMoreBytes, _):
            throw ImageProbeError(
                code: .truncated, message: "the image ends inside its header; fix the image", source: url)
        }
    }

    /// Downloads a whole image (for decoding), within the fetcher's byte cap.
    /// - Parameter url: An http(s) URL.
    /// - Returns: The body.
    /// - Throws: ``ImageProbeError`` naming the URL.
    public func download(url: String) async throws(ImageProbeError) -> [UInt8] {
        do {
            let (body, resource) = try await fetcher.streamBody(url)
            return try await body.collected(capacity: resource.totalSize ?? 64 * 1024)
        } catch let error as RemoteFetchError {
            throw Self.imageProbeError(error)
        } catch {
            throw ImageProbeError(code: .network, message: "downloading failed (\(error))", source: url)
        }
    }

    /// Fetch failures as probe failures, keeping the URL, the reason and what to do.
    static func imageProbeError(_ error: RemoteFetchError) -> ImageProbeError {
        let code: ImageProbeError.Code =
            switch error.code {
            case .privateAddress, .unsupportedScheme, .invalidURL: .refused
            case .timeout: .timeout
            case .httpStatus: .httpStatus
            case .tooLarge: .tooLarge
            default: .network
            }
        return ImageProbeError(code: code, message: error.reason, source: error.url)
    }
}
