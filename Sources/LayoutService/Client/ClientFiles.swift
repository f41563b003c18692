import ByteTools
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import TextMeasure

/// The reference web client: plain HTML, CSS and JavaScript kept in `Resources/client/` and served as they are
/// (no build step), so that a reader can open them, and lift them into another project.
///
/// `GET /` is the form (`index.html`), `GET /view/{id}` the viewer (`view.html`, the same file for every id: its
/// script reads the id from the address), `GET /client/{file}` the script and the style sheet.
struct ClientFiles: Sendable {
    struct File: Sendable {
        let body: ByteBuffer
        let contentType: String
        let entityTag: String
    }

    let files: [String: File]

    /// Reads every file of the client into memory (a few tens of kilobytes).
    /// - Throws: ``Missing`` when the files are not there (a binary moved without its
    ///   `FeedLayout_LayoutService.resources` folder).
    init() throws {
        guard let folder = Bundle.module.url(forResource: "client", withExtension: nil) else { throw Missing() }
        var files: [String: File] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            guard let type = Self.contentTypes[(name as NSString).pathExtension] else { continue }
            let bytes = try [UInt8](Data(contentsOf: folder.appendingPathComponent(name)))
            files[name] = File(
                body: ByteBuffer(bytes: bytes), contentType: type,
                entityTag: "\"" + SHA256.hexDigest(bytes).prefix(32) + "\"")
        }
        self.files = files
    }

    struct Missing: Error, CustomStringConvertible {
        var description: String {
            "the web client's files are missing: keep the FeedLayout_LayoutService.resources folder beside the binary"
        }
    }

    private static let contentTypes = [
        "html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8",
        "png": "image/png", "svg": "image/svg+xml",
    ]

    /// The file, revalidated on every use (`no-cache` with its entity tag), so an upgraded service is seen at once.
    func response(_ name: String, request: Request) throws -> Response {
        guard let file = files[name] else { throw ServiceProblem.notFound("the client has no file \(name.prefix(64))") }
        var headers: HTTPFields = [.contentType: file.contentType, .cacheControl: "no-cache", .eTag: file.entityTag]
        // The client's pages ask for nothing beyond this service.
        if file.contentType.hasPrefix("text/html") {
            headers[.contentSecurityPolicy] =
                "default-src 'self'; img-src * data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'"
        }
        if let header = request.headers[.ifNoneMatch], PageEncoding.ifNoneMatch(header, names: file.entityTag) {
            return Response(status: .notModified, headers: headers)
        }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: file.body))
    }
}
