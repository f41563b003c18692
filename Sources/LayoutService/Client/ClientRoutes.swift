import FeedLayout
import Foundation
import HTTPTypes
import Hummingbird
import LayoutStore
import LocalFileAccess
import NIOCore

/// What the web client needs beyond the layout API: its own files, each layout's text styles and fonts, and the
/// photos under the service's image root.
extension RouteHandlers {
    func clientFile(_ name: String, request: Request) throws -> Response {
        try client.response(name, request: request)
    }

    /// The view of a layout: the same file for every id, with `Link` headers that let the browser fetch what the
    /// script will ask for first (the layout, its style sheet and its primary fonts) while it is still reading
    /// the page, so the first cards come one round trip sooner.
    func view(_ request: Request, context: some RequestContext) async throws -> Response {
        var response = try client.response("view.html", request: request)
        guard let id = try? Self.layoutID(context), let style = try? await clientStyle(id: id) else { return response }
        let links =
            ["<\(Self.layoutPath(id))>; rel=preload; as=fetch; crossorigin",
             "<\(Self.layoutPath(id))/style.css>; rel=preload; as=style"]
            + style.primaryFonts.map { "<\($0)>; rel=preload; as=font; crossorigin" }
        response.headers[HTTPField.Name("Link")!] = links.joined(separator: ", ")
        return response
    }

    private static func layoutPath(_ id: String) -> String { "/v1/layouts/" + id }

    // MARK: GET /v1/layouts/{id}/style.css and /v1/layouts/{id}/fonts/{file}

    func style(_ request: Request, context: some RequestContext) async throws -> Response {
        let style = try await clientStyle(id: try Self.layoutID(context))
        return Response(
            status: .ok,
            // The id names the options and the font files: the sheet never changes.
            headers: [.contentType: "text/css; charset=utf-8", .cacheControl: "public, max-age=31536000, immutable"],
            body: ResponseBody(byteBuffer: style.css))
    }

    func font(_ request: Request, context: some RequestContext) async throws -> Response {
        let id = try Self.layoutID(context)
        let style = try await clientStyle(id: id)
        let file = context.parameters.get("file") ?? ""
        guard let face = style.fonts[file] else {
            throw ServiceProblem.notFound("layout \(id) has no font \(file.prefix(80))")
        }
        return try await withTaskExecutorPreference(resources.executor) { try await ClientStyle.fontResponse(face) }
    }

    func clientStyle(id: String) async throws -> ClientStyle {
        guard let record = try await store.layout(id) else { throw ServiceProblem.notFound("no layout \(id)") }
        let settings = self.settings
        let styles = self.styles
        // Resolving fonts and reading their character maps is file work: on the layout threads.
        return try await withTaskExecutorPreference(resources.executor) {
            try styles.style(id: id) {
                try ClientStyle(
                    layoutID: id, options: ClientOptions.layoutOptions(stored: record.options, settings: settings),
                    coverage: styles.coverage)
            }
        }
    }

    // MARK: GET /files/{path}

    /// A photo under the image root (`--image-root`), for the pages' relative photo URLs. Only image files are
    /// served, and only inside the root (after `..` and symbolic links).
    func imageFile(_ request: Request, context: some RequestContext) async throws -> Response {
        let path = context.parameters.getCatchAll().joined(separator: "/")
        guard let root = settings.imageRoot else {
            throw ServiceProblem.notFound("the service has no image root (start it with --image-root DIR)")
        }
        let decoded = path.removingPercentEncoding ?? path
        guard let type = Self.imageTypes[(decoded as NSString).pathExtension.lowercased()] else {
            throw ServiceProblem.notFound("\(decoded.prefix(200)): only photos are served from the image root")
        }
        let gate = LocalFileGate(roots: [root])
        let bytes = try await withTaskExecutorPreference(resources.executor) { () throws(ServiceProblem) -> [UInt8] in
            do {
                return try gate.read(root + "/" + decoded, maximumBytes: 256 << 20)
            } catch let refusal as LocalFileRefusal {
                throw ServiceProblem.notFound("\(decoded.prefix(200)): \(refusal.reason)")
            } catch {
                throw ServiceProblem.notFound("\(decoded.prefix(200)): \(error)")
            }
        }
        return Response(
            status: .ok, headers: [.contentType: type, .cacheControl: "public, max-age=3600"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    private static let imageTypes = [
        "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "webp": "image/webp",
        "bmp": "image/bmp", "avif": "image/avif",
    ]
}
