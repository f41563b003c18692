// swift-tools-version: 6.1
import PackageDescription

/// Settings every Swift target shares: Swift 6 mode plus `ExistentialAny`, as the house style asks.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// One system-library target per C library. `pkgConfig` finds the flags, `providers` names the
/// Debian package that SwiftPM suggests when it is missing.
func systemLibrary(_ name: String, pkgConfig: String, apt: String) -> Target {
    .systemLibrary(name: name, pkgConfig: pkgConfig, providers: [.apt([apt])])
}

let package = Package(
    name: "FeedLayout",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "feedlayout", targets: ["feedlayout"]),
        .library(name: "FeedLayout", targets: ["FeedLayout"]),
        .library(name: "LayoutPreview", targets: ["LayoutPreview"]),
        .library(name: "WaterfallLayout", targets: ["WaterfallLayout"]),
        // The stages on their own, for fuzzing and benchmark packages that depend on this one by path.
        .library(name: "FeedIngest", targets: ["FeedIngest"]),
        .library(name: "ImageProbe", targets: ["ImageProbe"]),
        .library(name: "TextMeasure", targets: ["TextMeasure"]),
        // The command line's option groups, so that a fuzzer reads options exactly as `feedlayout layout` does.
        .library(name: "LayoutCommandLine", targets: ["LayoutCommandLine"]),
        // The layout service, for a program that serves layouts in its own process.
        .library(name: "LayoutService", targets: ["LayoutService"]),
    ],
    // The lowest versions are the ones the build resolves and is tested with (Hummingbird 2.28 itself needs
    // swift-nio 2.101 and swift-log 1.14).
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-async-algorithms", from: "1.1.4"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        // The service: Hummingbird 2 without its default traits (swift-configuration support is not used, and
        // building it costs minutes on two cores), under swift-service-lifecycle, with Prometheus metrics.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // The service's shared store for several instances.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        // C libraries from Debian.
        systemLibrary("CLibXML2", pkgConfig: "libxml-2.0", apt: "libxml2-dev"),
        systemLibrary("CZlib", pkgConfig: "zlib", apt: "zlib1g-dev"),
        // Pages are gzipped with libdeflate: two thirds of zlib's time at the same level, a little smaller (Gzip.swift).
        systemLibrary("CLibDeflate", pkgConfig: "libdeflate", apt: "libdeflate-dev"),
        systemLibrary("CCrypto", pkgConfig: "libcrypto", apt: "libssl-dev"),
        systemLibrary("CLibPNG", pkgConfig: "libpng", apt: "libpng-dev"),
        systemLibrary("CLibJPEG", pkgConfig: "libjpeg", apt: "libjpeg62-turbo-dev"),
        systemLibrary("CFreeType", pkgConfig: "freetype2", apt: "libfreetype-dev"),
        systemLibrary("CHarfBuzz", pkgConfig: "harfbuzz", apt: "libharfbuzz-dev"),
        // The executable's allocator (see Sources/CJemalloc/shim.h); the libraries never depend on it.
        systemLibrary("CJemalloc", pkgConfig: "jemalloc", apt: "libjemalloc-dev"),
        systemLibrary("CICU", pkgConfig: "icu-uc", apt: "libicu-dev"),
        systemLibrary("CFontconfig", pkgConfig: "fontconfig", apt: "libfontconfig-dev"),

        // What Swift cannot do itself: setjmp around libpng/libjpeg, libxml2 error glue,
        // version-free ICU names.
        .target(
            name: "CFeedLayoutShims",
            dependencies: ["CLibXML2", "CLibPNG", "CLibJPEG", "CICU"]
        ),

        // The one policy for reading local files: which paths a feed may name, opened only as regular files.
        .target(
            name: "LocalFileAccess",
            swiftSettings: swiftSettings
        ),

        // Small tools over bytes that several stages share: a growable byte buffer, the JSON value reader, SHA-256
        // (OpenSSL's libcrypto) and base64.
        .target(
            name: "ByteTools",
            dependencies: ["CCrypto"],
            swiftSettings: swiftSettings
        ),

        // Stages, in the order data flows through them: ingest, fetch, probe, measure, place.
        .target(
            name: "FeedIngest",
            dependencies: ["ByteTools", "CLibXML2", "CFeedLayoutShims", "LocalFileAccess"],
            swiftSettings: swiftSettings
        ),
        // http(s) fetching for feeds and images: Range requests, byte caps, timeouts, redirect limits,
        // private and loopback addresses refused unless allowed.
        .target(
            name: "RemoteFetch",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ImageProbe",
            dependencies: ["ByteTools", "CLibPNG", "CLibJPEG", "CFeedLayoutShims", "LocalFileAccess", "RemoteFetch"],
            swiftSettings: swiftSettings
        ),
        // The probe cache: SQLite through GRDB, keyed by source and validator.
        .target(
            name: "ProbeCache",
            dependencies: [
                "ImageProbe", "LocalFileAccess", "RemoteFetch", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "TextMeasure",
            dependencies: [
                "ByteTools", "CFreeType", "CHarfBuzz", "CICU", "CFontconfig", "CFeedLayoutShims", "LocalFileAccess",
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "WaterfallLayout",
            swiftSettings: swiftSettings
        ),
        // Pages: the options, placement through the engines, pagination and cursors, and every JSON record
        // (the page schema's twin). Consumes the stages' value types; runs no stage itself.
        .target(
            name: "LayoutPages",
            dependencies: ["ByteTools", "FeedIngest", "ImageProbe", "TextMeasure", "WaterfallLayout", "CFeedLayoutShims"],
            swiftSettings: swiftSettings
        ),
        // The pipeline: the stages wired together, and the library API a program holds (it re-exports LayoutPages).
        .target(
            name: "FeedLayout",
            dependencies: [
                "ByteTools", "FeedIngest", "ImageProbe", "LocalFileAccess", "ProbeCache", "RemoteFetch", "TextMeasure",
                "WaterfallLayout", "LayoutPages",
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // Previews: index.html (cards at their frames, the measurement's fonts) and preview.png (photos decoded by
        // ImageProbe at their frames, glyphs rendered by TextMeasure, the file written with libpng).
        .target(
            name: "LayoutPreview",
            dependencies: [
                "FeedIngest", "FeedLayout", "LayoutPages", "TextMeasure", "ImageProbe", "LocalFileAccess",
                "WaterfallLayout", "CFeedLayoutShims",
            ],
            swiftSettings: swiftSettings
        ),
        // The command line's own pieces: the options `layout` and `preview` share (swift-argument-parser groups that
        // fill LayoutOptionValues), the reading of negative values (one definition for the CLI and the option
        // fuzzer), and the jobs only commands run (batches of feeds, input lists, `layout`'s job).
        .target(
            name: "LayoutCommandLine",
            dependencies: [
                "FeedLayout", "FeedIngest", "LayoutPages", "ProbeCache", "TextMeasure", "WaterfallLayout",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        // What the service keeps: layouts, their feeds, pages (gzipped) and pins, and the probes it learnt; in an
        // SQLite file of one process (GRDB) or in PostgreSQL shared by several instances (postgres-nio). Its errors
        // are its own (StoreError, with codes); the service decides what a client is told.
        .target(
            name: "LayoutStore",
            dependencies: [
                "LayoutPages", "LocalFileAccess", "ProbeCache", "ImageProbe", "RemoteFetch", "CZlib", "CLibDeflate",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // `feedlayout serve`: layouts laid out once and kept in a LayoutStore, served page by page
        // over HTTP (Hummingbird 2) under swift-service-lifecycle, with Prometheus metrics.
        .target(
            name: "LayoutService",
            dependencies: [
                "ByteTools", "FeedLayout", "LayoutPages", "LayoutStore", "LocalFileAccess", "ProbeCache", "RemoteFetch",
                "TextMeasure", "WaterfallLayout",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            // The web client's files are kept as plain files a reader can open and copy, and compiled into the
            // binary by scripts/embed-client (Client/EmbeddedClientFiles.swift), so `feedlayout` runs alone.
            exclude: ["Client/Resources"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "feedlayout",
            dependencies: [
                "LayoutCommandLine", "LayoutService", "LayoutStore", "FeedLayout", "FeedIngest", "LayoutPreview", "TextMeasure", "WaterfallLayout", "ImageProbe", "ProbeCache",
                "RemoteFetch", "CJemalloc",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),

        // Tests.
        // What several test targets share: a real HTTP server on 127.0.0.1, packed fuzz corpora and
        // folders of test inputs, a seeded random generator.
        .target(
            name: "FeedLayoutTestSupport",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Tests/FeedLayoutTestSupport",
            swiftSettings: swiftSettings),
        .testTarget(name: "LocalFileAccessTests", dependencies: ["LocalFileAccess"], swiftSettings: swiftSettings),
        .testTarget(name: "ByteToolsTests", dependencies: ["ByteTools"], swiftSettings: swiftSettings),
        .testTarget(
            name: "FeedIngestTests", dependencies: ["ByteTools", "FeedIngest", "FeedLayoutTestSupport"], exclude: ["Fixtures", "Feedparser"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ImageProbeTests",
            dependencies: [
                "ImageProbe", "RemoteFetch", "FeedLayoutTestSupport", "CLibPNG",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
            ],
            exclude: ["Fixtures"], swiftSettings: swiftSettings),
        .testTarget(
            name: "TextMeasureTests", dependencies: ["TextMeasure", "FeedLayoutTestSupport"], exclude: ["Chromium"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "WaterfallLayoutTests",
            dependencies: [
                "WaterfallLayout", "FeedLayoutTestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "RemoteFetchTests",
            dependencies: [
                "RemoteFetch", "FeedLayoutTestSupport", .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ProbeCacheTests",
            dependencies: [
                "ProbeCache", "ImageProbe", "RemoteFetch", "FeedLayoutTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "LayoutPagesTests",
            dependencies: [
                "LayoutPages", "ByteTools", "TextMeasure", "WaterfallLayout", "FeedIngest", "FeedLayoutTestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "FeedLayoutTests",
            dependencies: [
                "FeedLayout", "TextMeasure", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "LayoutCommandLineTests",
            dependencies: [
                "LayoutCommandLine", "LayoutPages", "WaterfallLayout",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "LayoutStoreTests",
            dependencies: [
                "LayoutStore", "FeedLayoutTestSupport", "ImageProbe", "ProbeCache", "RemoteFetch",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "LayoutServiceTests",
            dependencies: [
                "ByteTools", "FeedIngest", "LayoutService", "LayoutStore", "LayoutCommandLine", "FeedLayout", "FeedLayoutTestSupport", "ImageProbe",
                "ProbeCache", "RemoteFetch",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "LayoutPreviewTests",
            dependencies: [
                "LayoutPreview", "FeedLayout", "LocalFileAccess", "TextMeasure", "WaterfallLayout", "CFeedLayoutShims",
            ],
            exclude: ["Fixtures"], swiftSettings: swiftSettings),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "feedlayout", "FeedLayoutTestSupport", "LayoutPages", "WaterfallLayout",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            exclude: ["Golden", "FuzzRegressions"],
            swiftSettings: swiftSettings),
    ],
    swiftLanguageModes: [.v6]
)
