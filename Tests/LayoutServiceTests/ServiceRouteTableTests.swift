import Foundation
import HTTPTypes
import Testing

@testable import LayoutService

/// The route table is the service's one list of routes: it holds exactly the OpenAPI document's paths and methods,
/// and the 405 table made from it answers by path.
@Suite struct ServiceRouteTableTests {
    /// `METHOD /path` for every operation under the document's `paths` (two-space-indented path keys, four-space
    /// method keys: the document's own layout, which `scripts/check-openapi` validates as OpenAPI).
    static func documentedOperations() throws -> Set<String> {
        let document = try String(
            contentsOf: ServiceFeeds.repositoryRoot.appendingPathComponent("schemas/feedlayout-service.openapi.yaml"),
            encoding: .utf8)
        var operations: Set<String> = []
        var inPaths = false
        var path: String?
        for line in document.split(separator: "\n", omittingEmptySubsequences: false) {
            if !line.hasPrefix(" "), !line.isEmpty { inPaths = line == "paths:" }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":") {
                path = String(line.dropFirst(2).dropLast())
            } else if let path, let match = line.wholeMatch(of: #/ {4}(get|put|post|delete|patch|head|options):\s*/#) {
                operations.insert(match.1.uppercased() + " " + path)
            }
        }
        return operations
    }

    @Test func theTableHoldsExactlyTheDocumentsOperations() throws {
        let documented = try Self.documentedOperations()
        let routed = Set(ServiceRoute.all.map { $0.method.rawValue + " " + $0.path })
        #expect(documented.count >= 14, "the document's paths were not read: \(documented)")
        #expect(routed.subtracting(documented).isEmpty, "routed but not in the OpenAPI document")
        #expect(documented.subtracting(routed).isEmpty, "in the OpenAPI document but not routed")
        #expect(routed.count == ServiceRoute.all.count, "a route is listed twice")
    }

    @Test func theRouterPathOfARouteThatTakesTheRestEndsInTwoStars() {
        let files = ServiceRoute.all.first { $0.takesRest }
        #expect(files?.path == "/files/{path}")
        #expect(files?.routerPath == "/files/**")
        #expect(ServiceRoute.all.filter(\.takesRest).count == 1)
        #expect(ServiceRoute.all.first { $0.path == ServiceRoute.pagePath }?.routerPath == ServiceRoute.pagePath)
    }

    @Test(arguments: [
        ("/v1/layouts", ["POST", "GET"]),
        ("/v1/layouts/0123456789abcdef0123456789abcdef", ["GET", "DELETE"]),
        ("/v1/layouts/x/pages/3", ["GET"]),
        ("/v1/layouts/x/fonts/a.ttf", ["GET"]),
        ("/files/photos/a.jpg", ["GET"]),
        ("/files/a", ["GET"]),
        ("/", ["GET"]),
        ("/files", []),
        ("/v1/layouts/x/pages", []),
        ("/v2/layouts", []),
    ])
    func methodsAreFoundByPath(path: String, methods: [String]) {
        #expect(ServiceRoutesTable(ServiceRoute.all).methods(forPath: path) == methods)
    }
}
