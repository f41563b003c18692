import FeedLayoutTestSupport
import Foundation
import Testing

/// `feedlayout serve` as an operator starts it: options from a file and the environment, and the refusal to serve
/// a public address without keys.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ServeConfigurationEndToEndTests {
    @Test func aPublicAddressWithoutKeysIsRefusedAndSaysWhatToDo() async throws {
        let folder = try CommandRunner.temporaryDirectory()
        let store = folder.appendingPathComponent("store.sqlite").path
        let refused = try await CommandRunner.run(["serve", "--host", "0.0.0.0", "--store", store], timeout: 60)
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("--api-keys FILE or FEEDLAYOUT_API_KEYS"))
        #expect(refused.stderr.contains("--no-auth"))
        #expect(!FileManager.default.fileExists(atPath: store), "nothing was opened")
        // The same from the environment.
        let fromEnvironment = try await CommandRunner.run(
            ["serve", "--store", store], environment: ["FEEDLAYOUT_HOST": "0.0.0.0"], timeout: 60)
        #expect(fromEnvironment.status == 2)
        let badKeys = folder.appendingPathComponent("keys")
        try Data("writer:write:not-a-digest\n".utf8).write(to: badKeys)
        let wrongKeys = try await CommandRunner.run(
            ["serve", "--host", "0.0.0.0", "--store", store, "--api-keys", badKeys.path], timeout: 60)
        #expect(wrongKeys.status != 0)
        #expect(wrongKeys.stderr.contains("\(badKeys.path):1: the key's digest is not 64 lower-case hex digits"))
    }

    @Test func theEnvironmentWinsOverTheFileAndTheCommandLineOverBoth() async throws {
        let folder = try CommandRunner.temporaryDirectory()
        let config = folder.appendingPathComponent("serve.conf")
        try Data(
            """
            # what an operator keeps in /etc
            log-format = json
            access-log = off
            max-feed-bytes = 1000
            """.utf8
        ).write(to: config)
        let store = folder.appendingPathComponent("store.sqlite").path
        let service = try await ServeEndToEndTests.ServeProcess(
            store: store, arguments: ["--max-feed-bytes", "2000"],
            environment: ["FEEDLAYOUT_CONFIG": config.path, "FEEDLAYOUT_LOG_FORMAT": "json"])
        defer { _ = service.signal(SIGTERM) }
        // JSON log lines (from the environment and the file alike).
        let firstLine = try #require(service.log().split(separator: "\n").first)
        let object = try JSONSerialization.jsonObject(with: Data(firstLine.utf8)) as? [String: Any]
        #expect(object?["label"] as? String == "feedlayout.serve")
        // 2,000 bytes from the command line, not the file's 1,000: a feed of 1,500 bytes is taken.
        let feed = "<rss version=\"2.0\"><channel><title>t</title>" + String(repeating: " ", count: 1400) + "</channel></rss>"
        let posted = try await service.post(["feedText": feed])
        #expect(posted.status == 202 || posted.status == 200)
        let tooLarge = try await service.post(["feedText": feed + String(repeating: " ", count: 600)])
        #expect(tooLarge.status == 413)
    }
}
