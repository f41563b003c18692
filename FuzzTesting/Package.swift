// swift-tools-version: 6.1
import PackageDescription

// libFuzzer targets for FeedLayout's hostile-input surfaces, kept out of the main package so that
// the root build never needs sanitizer flags. Build and run with ../scripts/fuzz (see README.md).
let package = Package(
    name: "FeedLayoutFuzzTesting",
    platforms: [.macOS(.v14)],
    dependencies: [
        // Named explicitly: a path dependency's identity is otherwise its folder name (wt-…, main, a clone).
        .package(name: "FeedLayout", path: "..")
    ],
    targets: [
        // What the two ingest fuzzers share: one reader run over an input in given chunk sizes.
        .target(
            name: "IngestFuzzSupport",
            dependencies: [.product(name: "FeedIngest", package: "FeedLayout")]
        ),
        .executableTarget(
            name: "FeedIngestFuzzer",
            dependencies: ["IngestFuzzSupport", .product(name: "FeedIngest", package: "FeedLayout")]
        ),
        .executableTarget(
            name: "FeedStreamFuzzer",
            dependencies: ["IngestFuzzSupport", .product(name: "FeedIngest", package: "FeedLayout")]
        ),
        .executableTarget(
            name: "ImageHeaderFuzzer",
            dependencies: [.product(name: "ImageProbe", package: "FeedLayout")]
        ),
        .executableTarget(
            name: "PixelDecoderFuzzer",
            dependencies: [.product(name: "ImageProbe", package: "FeedLayout")]
        ),
        // What the two layout fuzzers share: a tiny feed on disk and a way to wait for an async run.
        .target(
            name: "LayoutFuzzSupport",
            dependencies: [.product(name: "FeedLayout", package: "FeedLayout")]
        ),
        .executableTarget(
            name: "CursorFuzzer",
            dependencies: ["LayoutFuzzSupport", .product(name: "FeedLayout", package: "FeedLayout")]
        ),
        .executableTarget(
            name: "OptionFuzzer",
            dependencies: [
                "LayoutFuzzSupport", .product(name: "FeedLayout", package: "FeedLayout"),
                .product(name: "LayoutCommandLine", package: "FeedLayout"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
