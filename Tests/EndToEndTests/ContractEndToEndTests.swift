import FeedLayoutTestSupport
import Foundation
import Testing

/// `feedlayout serve` against its OpenAPI document, checked by a tool nobody here wrote: `scripts/check-contract`
/// runs schemathesis with all of its checks (documented statuses, content types, headers and bodies only; valid
/// requests accepted and invalid ones refused; no 5xx) over every route, the layout routes with a real layout, once
/// without keys and once with keys and private reads.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct ContractEndToEndTests {
    /// Whether schemathesis can be imported by the `python3` the script runs (`scripts/install-deps --test`
    /// installs it).
    static let schemathesisInstalled: Bool = {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", "import schemathesis.cli"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        return process.waitForExit() == 0
    }()

    @Test(
        .enabled(
            if: schemathesisInstalled,
            "schemathesis is not installed for python3: scripts/install-deps --test installs it"))
    func schemathesisFindsNoFailureWithoutAndWithKeys() async throws {
        let script = CommandRunner.repositoryRoot.appendingPathComponent("scripts/check-contract").path
        let output = try await CommandRunner.runTool(script, ["--binary", CommandRunner.binary.path], timeout: 540)
        let report = "scripts/check-contract exited \(output.status):\n\(output.stdoutText)\n\(output.stderr)"
        #expect(output.status == 0, "\(report)")
        // Each pass prints schemathesis' closing line and its count of test cases: it ran, and checked something.
        for pass in ["open", "keys"] {
            let line = output.stdoutText.split(separator: "\n").first { $0.hasPrefix("check-contract: \(pass): No issues") }
            let counts = line?.firstMatch(of: /\((\d+) generated, (\d+) passed\)/)
            #expect(counts != nil, "no summary of the \(pass) pass: \(report)")
            if let counts {
                #expect(Int(counts.1)! >= 500 && counts.1 == counts.2, "\(pass): \(line ?? "")")
            }
        }
    }
}
