import FeedLayoutTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `feedlayout serve` killed with SIGKILL while it removes a layout: after the next start every layout is whole or
/// gone (never some of its pages or pins without the rest), and no feed file is left that no layout names.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct StoreRemovalEndToEndTests {
    typealias ServeProcess = ServeEndToEndTests.ServeProcess

    /// Runs a Python program with the store's path as its argument (Python's sqlite3: the test reads and writes the
    /// file as any other program would), and returns its standard output.
    static func python(_ program: String, _ store: String) async throws -> String {
        let output = try await CommandRunner.runTool("/usr/bin/env", ["python3", "-c", program, store], timeout: 120)
        #expect(output.status == 0, "\(output.stderr)")
        return output.stdoutText
    }

    static let big = String(repeating: "ab", count: 16)
    static let small = String(repeating: "cd", count: 16)

    /// Counts of the rows of a layout in each table, and whether its feed file exists, as `table=count` words.
    static let census = """
        import os, sqlite3, sys
        c = sqlite3.connect(sys.argv[1])
        for id in sys.argv[2:]:
            counts = [t + "=" + str(c.execute("SELECT count(*) FROM " + t + " WHERE " + ("id" if t == "layout" else "layoutId") + " = ?", (id,)).fetchone()[0]) for t in ["layout", "part", "page", "pin_block"]]
            print(id, " ".join(counts), "file=" + str(int(os.path.exists(sys.argv[1] + ".feeds/" + id))))
        """

    @Test func aKillDuringARemovalLeavesEveryLayoutWholeOrGone() async throws {
        let folder = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("store.sqlite").path
        // The schema, made by the service itself.
        let first = try await ServeProcess(store: store)
        #expect(first.signal(SIGTERM) == 0)
        // A large layout (20,000 pages of 20 pins, each page with its pin block: the removal of 200 pages and
        // 400,000 pin rows took 1.5 s in a debug build, so the kill below, a millisecond or so after the removal
        // began, lands inside it) and a small one, written as the service writes them.
        _ = try await Self.python(
            """
            import os, sqlite3, struct, sys
            c = sqlite3.connect(sys.argv[1])
            for id, pages in [("\(Self.big)", 20000), ("\(Self.small)", 2)]:
                c.execute("INSERT INTO layout (id, status, options, feedName, createdAt, itemCount) VALUES (?, 'done', '{}', 'f', 1764356400.0, ?)", (id, pages * 20))
                c.execute("INSERT INTO part (layoutId, layoutIndex, width, columns, pageCount) VALUES (?, 0, 320, 2, ?)", (id, pages))
                c.executemany("INSERT INTO page (layoutId, layoutIndex, pageIndex, gzip, cursor) VALUES (?, 0, ?, ?, ?)",
                    [(id, p, os.urandom(2000), "c%d" % p) for p in range(pages)])
                c.executemany("INSERT INTO pin_block (layoutId, layoutIndex, pageIndex, itemEnd, pins) VALUES (?, 0, ?, ?, ?)",
                    [(id, p, p * 20 + 20, b"".join(struct.pack(">qiiqqqqqii", i, 0, 1, 0, i, 10, 10, p, 0, 1) for i in range(p * 20, p * 20 + 20))) for p in range(pages)])
                with open(sys.argv[1] + ".feeds/" + id, "wb") as f: f.write(b"<rss/>")
            c.commit()
            """, store)
        let service = try await ServeProcess(store: store)
        // DELETE, and SIGKILL the moment the service logs that the removal begins.
        let removal = Task {
            try await ServeProcess.http("DELETE", "http://127.0.0.1:\(service.port)/v1/layouts/\(Self.big)")
        }
        let deadline = ContinuousClock.now + .seconds(60)
        while !service.log().contains("removing a layout"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .microseconds(500))
        }
        #expect(service.signal(SIGKILL) == SIGKILL)
        _ = try? await removal.value
        // The next start removes feed files no row names.
        let next = try await ServeProcess(store: store)
        #expect(next.signal(SIGTERM) == 0)

        let lines = try await CommandRunner.runTool(
            "/usr/bin/env", ["python3", "-c", Self.census, store, Self.big, Self.small], timeout: 60
        ).stdoutText.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(lines)")
        let whole = "\(Self.big) layout=1 part=1 page=20000 pin_block=20000 file=1"
        let gone = "\(Self.big) layout=0 part=0 page=0 pin_block=0 file=0"
        #expect(lines.first == whole || lines.first == gone, "half a layout after the kill: \(lines)")
        #expect(lines.last == "\(Self.small) layout=1 part=1 page=2 pin_block=2 file=1")
        let files = try FileManager.default.contentsOfDirectory(atPath: store + ".feeds").sorted()
        #expect(files == (lines.first == whole ? [Self.big, Self.small] : [Self.small]))
    }
}
