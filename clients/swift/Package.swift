// swift-tools-version:5.9
// FeedLayoutClient: reads the pages `feedlayout layout` and `feedlayout serve` write (`feedlayout.page/1`), answers
// the service's viewport and snapping queries over the pins it has loaded, and loads pages from a service.
// A package of its own, apart from the repository's root package: no dependencies, only Foundation
// (and FoundationNetworking on Linux, for URLSession), so an iOS or macOS app can add it as it is.
import PackageDescription

let package = Package(
    name: "FeedLayoutClient",
    platforms: [.iOS(.v15), .macOS(.v12)],
    products: [
        .library(name: "FeedLayoutClient", targets: ["FeedLayoutClient"])
    ],
    targets: [
        .target(name: "FeedLayoutClient"),
        .testTarget(
            name: "FeedLayoutClientTests",
            dependencies: ["FeedLayoutClient"],
            resources: [.copy("Fixtures")]),
    ]
)
