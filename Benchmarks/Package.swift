// swift-tools-version: 6.1
import Foundation
import PackageDescription

// A path dependency's identity is the name of its folder, which differs between clones
// (main, feedlayout, fresh, …): work it out instead of hard-coding it.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
let rootPackage = root.lastPathComponent

/// A benchmark executable (package-benchmark finds it by its plugin) using these products of the root package.
func benchmarkTarget(_ name: String, _ products: String...) -> Target {
    .executableTarget(
        name: name,
        dependencies: [.product(name: "Benchmark", package: "benchmark"), "BenchmarkInputs"]
            + products.map { .product(name: $0, package: rootPackage) },
        path: "Benchmarks/\(name)",
        plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    )
}

let package = Package(
    name: "FeedLayoutBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.0", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "EngineBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "WaterfallLayout", package: rootPackage),
                .product(name: "FeedIngest", package: rootPackage),
                .product(name: "FeedLayout", package: rootPackage),
            ],
            path: "Benchmarks/EngineBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // The sample feed and photos as benchmark inputs, shared by the targets below.
        .target(name: "BenchmarkInputs", path: "Benchmarks/BenchmarkInputs"),
        benchmarkTarget("IngestBenchmarks", "FeedIngest"),
        benchmarkTarget("ProbeBenchmarks", "ImageProbe"),
        benchmarkTarget("MeasureBenchmarks", "TextMeasure", "FeedIngest"),
        benchmarkTarget("PipelineBenchmarks", "FeedLayout"),
    ],
    swiftLanguageModes: [.v6]
)
