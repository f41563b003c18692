// swift-tools-version: 6.1
import PackageDescription

/// An optimised benchmark executable for TextMeasure, kept out of the root package so that
/// `swift build -c release` here builds only TextMeasure and its C libraries, never the
/// networking and database stages. Run it through Benchmarks/text-bench/micro or
/// Benchmarks/peers/text-vs-pango.
let package = Package(
    name: "TextBench",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "FeedLayout", path: "../..")
    ],
    targets: [
        .executableTarget(
            name: "text-bench",
            dependencies: [.product(name: "TextMeasure", package: "FeedLayout")],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        )
    ],
    swiftLanguageModes: [.v6]
)
