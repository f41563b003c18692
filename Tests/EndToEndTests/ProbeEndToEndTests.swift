import FeedLayoutTestSupport
import Foundation
import Testing

/// `feedlayout probe` with URLs served by a real HTTP server on 127.0.0.1, files, the cache and its flags.
@Suite(.timeLimit(.minutes(2)))
struct ProbeEndToEndTests {
    static let fixtures = CommandRunner.repositoryRoot.appendingPathComponent("Tests/ImageProbeTests/Fixtures").path
    static let images = [
        "jpeg-baseline.jpg", "jpeg-gradient-orientation-6.jpg", "png-gradient.png", "gif-animated.gif",
        "webp-lossless.webp",
        "jpeg-progressive.jpg", "png-interlaced.png", "bmp-top-down.bmp",
    ]

    static func records(_ output: CommandRunner.Output) throws -> [[String: Any]] {
        try output.stdoutText.split(separator: "\n").map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    static func serveFixtures(_ server: TestHTTPServer, honoursRange: Bool = true) throws -> [String] {
        try images.filter { FileManager.default.fileExists(atPath: fixtures + "/" + $0) }.map { name in
            let bytes = try Data(contentsOf: URL(fileURLWithPath: fixtures + "/" + name))
            server.serve(
                "/img/" + name, .init(body: [UInt8](bytes), honoursRange: honoursRange, entityTag: "\"\(name)\""))
            return name
        }
    }

    @Test func urlsAndFilesComeOutInInputOrderWithOneRangeRequestPerImage() async throws {
        try await TestHTTPServer.with { server in
            let names = try Self.serveFixtures(server)
            #expect(names.count >= 6)
            var inputs: [String] = []
            for name in names {
                inputs.append(server.url("/img/" + name))
                inputs.append(Self.fixtures + "/" + name)
            }
            inputs.append(server.url("/img/missing.jpg"))
            let output = try await CommandRunner.run(
                ["probe", "--no-cache", "--allow-private-network", "--concurrency", "4"] + inputs)
            #expect(output.status == 1, "one input is missing")
            let records = try Self.records(output)
            #expect(records.map { $0["source"] as? String } == inputs)
            for pair in stride(from: 0, to: names.count * 2, by: 2) {
                let remote = records[pair]
                let local = records[pair + 1]
                for key in ["format", "width", "height", "orientation", "displayWidth", "displayHeight"] {
                    #expect("\(remote[key] ?? "-")" == "\(local[key] ?? "-")", "\(inputs[pair]) \(key)")
                }
                #expect(remote["error"] == nil)
            }
            let error = try #require(records.last?["error"] as? [String: Any])
            #expect(error["code"] as? String == "httpStatus")
            for name in names {
                #expect(server.requests(for: "/img/" + name).count == 1, "\(name)")
            }
        }
    }

    @Test func privateAddressesNeedTheFlag() async throws {
        try await TestHTTPServer.with { server in
            _ = try Self.serveFixtures(server)
            let output = try await CommandRunner.run(["probe", "--no-cache", server.url("/img/jpeg-baseline.jpg")])
            #expect(output.status == 1)
            let error = try #require(try Self.records(output).first?["error"] as? [String: Any])
            #expect(error["code"] as? String == "refused")
            #expect((error["message"] as? String)?.contains("--allow-private-network") == true)
            #expect(server.requests.isEmpty)
        }
    }

    @Test func theCacheRevalidatesURLsAndCarriesPlaceholders() async throws {
        let folder = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cachePath = folder.appendingPathComponent("cache/probe.sqlite").path
        try await TestHTTPServer.with { server in
            _ = try Self.serveFixtures(server, honoursRange: false)
            let url = server.url("/img/jpeg-gradient-orientation-6.jpg")
            let arguments = ["probe", "--cache", cachePath, "--allow-private-network", "--placeholders", url]
            let first = try await CommandRunner.run(arguments)
            #expect(first.status == 0, "\(first.stderr)")
            let second = try await CommandRunner.run(arguments)
            #expect(second.stdout == first.stdout)
            let placeholder = try #require(try Self.records(second).first?["placeholder"] as? [String: Any])
            #expect((placeholder["color"] as? String)?.hasPrefix("#") == true)
            #expect((placeholder["thumbHash"] as? String)?.isEmpty == false)
            let requests = server.requests(for: "/img/jpeg-gradient-orientation-6.jpg")
            // First run: the header, then the whole image for its placeholder; second run: one conditional request.
            #expect(requests.count == 3)
            #expect(requests.last?.headers["if-none-match"] == "\"jpeg-gradient-orientation-6.jpg\"")
        }
    }

    @Test func aCorruptCacheIsAUsageErrorNamingTheFile() async throws {
        let folder = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cachePath = folder.appendingPathComponent("probe.sqlite").path
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: cachePath))
        let output = try await CommandRunner.run(["probe", "--cache", cachePath, Self.fixtures + "/jpeg-baseline.jpg"])
        #expect(output.status == 2)
        #expect(output.stderr.contains(cachePath))
        let bypassed = try await CommandRunner.run(["probe", "--no-cache", Self.fixtures + "/jpeg-baseline.jpg"])
        #expect(bypassed.status == 0)
    }

    @Test func anInputListGivesTheSameRecordsAsArguments() async throws {
        let folder = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let paths = Self.images.map { Self.fixtures + "/" + $0 } + ["missing.jpg"]
        let list = folder.appendingPathComponent("inputs.txt")
        try (paths.joined(separator: "\n") + "\n\n").write(to: list, atomically: true, encoding: .utf8)
        let fromArguments = try await CommandRunner.run(["probe", "--no-cache"] + paths)
        let fromFile = try await CommandRunner.run(["probe", "--no-cache", "--input-list", list.path])
        let fromStdin = try await CommandRunner.run(
            ["probe", "--no-cache", "--input-list", "-"], stdin: Data(paths.joined(separator: "\n").utf8))
        #expect(fromArguments.status == 1)
        #expect(fromFile.status == 1 && fromStdin.status == 1)
        #expect(fromFile.stdout == fromArguments.stdout)
        #expect(fromStdin.stdout == fromArguments.stdout)
        let unreadable = try await CommandRunner.run([
            "probe", "--no-cache", "--input-list", folder.appendingPathComponent("nope").path,
        ])
        #expect(unreadable.status == 2)
        #expect(unreadable.stderr.contains("--input-list"))
        #expect(unreadable.stderr.contains("No such file or directory"))
        // A pipe, as bash's <(…) gives: read with plain reads (Foundation refuses /dev/fd paths).
        let fromPipe = try await CommandRunner.runTool(
            "/bin/bash",
            ["-c", "\"$0\" probe --no-cache --input-list <(cat \"$1\")", CommandRunner.binary.path, list.path])
        #expect(fromPipe.stdout == fromArguments.stdout, "stderr: \(fromPipe.stderr)")
    }

    /// As `probe *.jpg` over a big folder gives them: 10,000 paths, with options among them. Their records come out
    /// in argument order, the same as from an input list (which swift-argument-parser never sees).
    @Test func tenThousandArgumentsComeOutInOrderAsFromAnInputList() async throws {
        let folder = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let names = Self.images + ["missing.jpg"]
        let paths = (0..<10_000).map { Self.fixtures + "/" + names[($0 * 7) % names.count] }
        let list = folder.appendingPathComponent("inputs.txt")
        try paths.joined(separator: "\n").write(to: list, atomically: true, encoding: .utf8)
        let fromArguments = try await CommandRunner.run(
            ["probe"] + paths[..<4_000] + ["--concurrency", "3"] + paths[4_000...] + ["--no-cache"])
        let fromFile = try await CommandRunner.run(["probe", "--no-cache", "--concurrency", "3", "--input-list", list.path])
        #expect(fromArguments.status == 1, "missing.jpg fails: \(fromArguments.stderr.prefix(500))")
        let records = try Self.records(fromArguments)
        #expect(records.map { $0["source"] as? String } == paths)
        let absent = paths.filter { !FileManager.default.fileExists(atPath: $0) }
        #expect(absent.count >= 1_111, "missing.jpg is every ninth path")
        #expect(records.filter { $0["error"] != nil }.count == absent.count)
        #expect(fromArguments.stdout == fromFile.stdout)
    }

    @Test func verifyReportsDecodability() async throws {
        let output = try await CommandRunner.run([
            "probe", "--no-cache", "--verify", Self.fixtures + "/jpeg-baseline.jpg",
            Self.fixtures + "/png-bad-idat-crc.png",
            Self.fixtures + "/gif-animated.gif", "--pixel-budget", "1000000",
        ])
        #expect(output.status == 1)
        let records = try Self.records(output)
        #expect(records.map { $0["decodable"] as? Bool } == [true, false, nil])
        #expect((records[1]["error"] as? [String: Any])?["code"] as? String == "notDecodable")
    }
}

/// `layout --placeholders` and the probe cache in the pipeline.
@Suite(.timeLimit(.minutes(2)))
struct LayoutPlaceholderEndToEndTests {
    static func photos(_ output: CommandRunner.Output) throws -> [[String: Any]] {
        try ProbeEndToEndTests.records(output).flatMap { page in
            try #require(page["items"] as? [[String: Any]]).map { try #require($0["photo"] as? [String: Any]) }
        }
    }

    @Test func placeholdersReachThePageItemsAndTheCacheGivesTheSamePages() async throws {
        let folder = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cachePath = folder.appendingPathComponent("probe.sqlite").path
        let plain = try await CommandRunner.run(["layout", CommandRunner.sampleFeed, "--no-cache"])
        let first = try await CommandRunner.run(["layout", CommandRunner.sampleFeed, "--placeholders", "--cache", cachePath])
        let second = try await CommandRunner.run(["layout", CommandRunner.sampleFeed, "--placeholders", "--cache", cachePath])
        #expect(first.status == plain.status)
        #expect(second.stdout == first.stdout, "cached pages are byte-identical")
        let photos = try Self.photos(first)
        let plainPhotos = try Self.photos(plain)
        #expect(photos.count == plainPhotos.count)
        var withPlaceholder = 0
        for (photo, plainPhoto) in zip(photos, plainPhotos) {
            // The existing fields keep their values; the placeholder is added after them.
            for key in ["url", "width", "height", "sizeFrom", "format", "orientation"] {
                #expect("\(photo[key] ?? "-")" == "\(plainPhoto[key] ?? "-")")
            }
            #expect(plainPhoto["placeholder"] == nil)
            if let placeholder = photo["placeholder"] as? [String: Any] {
                withPlaceholder += 1
                #expect([7, 9].contains((placeholder["color"] as? String)?.count ?? 0), "#rrggbb or #rrggbbaa")
                #expect((placeholder["thumbHash"] as? String)?.isEmpty == false)
            }
        }
        #expect(withPlaceholder >= 40)
        #expect(FileManager.default.fileExists(atPath: cachePath))
    }
}
