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
        .executableTarget(
            name: "FeedIngestFuzzer",
            dependencies: [.product(name: "FeedIngest", package: "FeedLayout")]
        ),
        .executableTarget(
            name: "ImageHeaderFuzzer",
            dependencies: [.product(name: "ImageProbe", package: "FeedLayout")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
