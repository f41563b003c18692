import Foundation
import XCTest

/// The README's example is ReadmeExample.swift, compiled with these tests (ServiceTests runs it): the two must stay
/// the same text.
final class ReadmeTests: XCTestCase {
    func testTheReadmeExampleIsTheCompiledOne() throws {
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: package.appendingPathComponent("README.md"), encoding: .utf8)
        let example = try String(
            contentsOf: package.appendingPathComponent("Tests/FeedLayoutClientTests/ReadmeExample.swift"), encoding: .utf8)
        // The README's Swift blocks; the example is the one that imports the package.
        let blocks = readme.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        let shown = try XCTUnwrap(blocks.first { $0.contains("import FeedLayoutClient") }, "no example in README.md")
        XCTAssertEqual(shown, example, "README.md's example and ReadmeExample.swift differ: keep them the same")
        XCTAssertLessThanOrEqual(
            example.split(separator: "\n").filter { !$0.hasPrefix("import") && !$0.isEmpty }.count, 12,
            "the example is meant to be about ten lines")
    }
}
