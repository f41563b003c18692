import ByteTools
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import TextMeasure

/// The reference web client: plain HTML, CSS and JavaScript kept in `Resources/client/` and served as they are
/// (no build step), so that a reader can open them, and lift them into another project. They are compiled into the
/// binary (``EmbeddedClientFiles``, written by `scripts/embed-client`), so a `feedlayout` copied alone serves them.
///
/// `GET /` is the form (`index.html`), `GET /view/{id}` the viewer (`view.html`, the same file for every id: its
/// script reads the id from the address), `GET /client/{file}` the scripts and the style sheets, the ES module
/// `feedlayout.mjs` (kept in `clients/js/`) that the view is a thin page on, and that other pages import, among them.
struct ClientFiles: Sendable {
    struct File: Sendable {
        let body: ByteBuffer
        let contentType: String
        let entityTag: String
    }

    let files: [String: File]

    /// Decodes every file of the client, compiled into the binary by `scripts/embed-client` (a few tens of
    /// kilobytes), so that the binary serves them from any folder it is copied to.
    /// - Throws: ``Damaged`` when a compiled file is not base64 (a generated source edited by hand).
    init() throws {
        try self.init(embedded: EmbeddedClientFiles.files)
    }

    /// The files from their names and base64 bytes (files of a type the client does not serve are left out).
    init(embedded: [(name: String, base64: String)]) throws {
        var files: [String: File] = [:]
        for (name, base64) in embedded {
            guard let type = Self.contentTypes[(name as NSString).pathExtension] else { continue }
            guard let bytes = Base64.decode(Array(base64.utf8), alphabet: .standard, padded: true) else {
                throw Damaged(name: name)
            }
            files[name] = File(
                body: ByteBuffer(bytes: bytes), contentType: type,
                entityTag: "\"" + SHA256.hexDigest(bytes).prefix(32) + "\"")
        }
        self.files = files
    }

    struct Damaged: Error, CustomStringConvertible {
        let name: String
        var description: String {
            "the web client's file \(name) compiled into the binary is not base64: run scripts/embed-client and "
                + "build again"
        }
    }

    private static let contentTypes = [
        "html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "mjs": "text/javascript; charset=utf-8",
        "css": "text/css; charset=utf-8",
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
