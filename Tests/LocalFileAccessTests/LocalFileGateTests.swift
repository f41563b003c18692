import Foundation
import LocalFileAccess
import Testing

/// The gate on a real folder: what it opens, what it refuses and why, and that nothing it refuses blocks.
@Suite struct LocalFileGateTests {
    /// `root/` holds `photo.jpg`, a FIFO, a folder, a link inside and links out; `outside/` holds a secret.
    struct Folder {
        let base: URL
        var root: URL { base.appendingPathComponent("root") }
        var outside: URL { base.appendingPathComponent("outside") }
        var gate: LocalFileGate { LocalFileGate(roots: [root.path]) }

        init() throws {
            base = FileManager.default.temporaryDirectory.appendingPathComponent("gate-\(UUID().uuidString)")
            let manager = FileManager.default
            try manager.createDirectory(at: root.appendingPathComponent("folder"), withIntermediateDirectories: true)
            try manager.createDirectory(at: outside, withIntermediateDirectories: true)
            try Data("photo".utf8).write(to: root.appendingPathComponent("photo.jpg"))
            try Data("secret".utf8).write(to: outside.appendingPathComponent("secret"))
            try manager.createSymbolicLink(
                atPath: root.appendingPathComponent("inside-link").path, withDestinationPath: "photo.jpg")
            try manager.createSymbolicLink(
                atPath: root.appendingPathComponent("outside-link").path,
                withDestinationPath: outside.appendingPathComponent("secret").path)
            try manager.createSymbolicLink(
                atPath: root.appendingPathComponent("device-link").path, withDestinationPath: "/dev/zero")
            #expect(mkfifo(root.appendingPathComponent("fifo").path, 0o644) == 0)
        }

        func remove() { try? FileManager.default.removeItem(at: base) }
    }

    @Test func opensRegularFilesInsideTheRootDirectlyOrThroughALink() throws {
        let folder = try Folder()
        defer { folder.remove() }
        for name in ["photo.jpg", "inside-link", "folder/../photo.jpg"] {
            let path = folder.root.path + "/" + name
            #expect(try folder.gate.read(path) == Array("photo".utf8), "\(name)")
            #expect(try folder.gate.admit(path).hasSuffix("/root/photo.jpg"))
        }
    }

    @Test(arguments: [
        ("outside-link", LocalFileRefusal.Code.outsideAllowedFolders),
        ("../outside/secret", .outsideAllowedFolders),
        ("device-link", .outsideAllowedFolders),
        ("fifo", .notRegularFile),
        ("folder", .notRegularFile),
        ("missing.jpg", .notFound),
    ])
    func refusesWithTheReason(_ name: String, _ code: LocalFileRefusal.Code) throws {
        let folder = try Folder()
        defer { folder.remove() }
        let path = folder.root.path + "/" + name
        do {
            close(try folder.gate.open(path))
            Issue.record("opened \(name)")
        } catch {
            #expect(error.code == code, "\(error)")
            #expect(error.message.hasPrefix(path + ": "))
            #expect(!error.message.contains("secret") || name.contains("secret"))
        }
        do {
            _ = try folder.gate.admit(path)
            Issue.record("admitted \(name)")
        } catch {
            #expect(error.code == code, "\(error)")
        }
    }

    @Test func aDeviceInsideARootIsNotARegularFile() {
        let gate = LocalFileGate(roots: ["/dev"])
        #expect(gate.root(containing: "/dev/zero") != nil)
        do {
            _ = try gate.open("/dev/zero")
            Issue.record("opened /dev/zero")
        } catch {
            #expect(error.code == .notRegularFile)
            #expect(error.reason.hasPrefix("a character device"))
        }
    }

    @Test func noLocalFilesRefusesEverything() throws {
        let folder = try Folder()
        defer { folder.remove() }
        #expect(throws: LocalFileRefusal.self) {
            _ = try LocalFileGate.noLocalFiles.open(folder.root.appendingPathComponent("photo.jpg").path)
        }
        #expect(LocalFileGate.noLocalFiles.isConfined)
    }

    @Test func anyRegularFileTakesAnyPathButNoFIFO() throws {
        let folder = try Folder()
        defer { folder.remove() }
        #expect(try LocalFileGate.anyRegularFile.read(folder.outside.appendingPathComponent("secret").path).count == 6)
        #expect(throws: LocalFileRefusal.self) {
            _ = try LocalFileGate.anyRegularFile.open(folder.root.appendingPathComponent("fifo").path)
        }
    }

    @Test func rootIsMatchedByWholeComponents() {
        let gate = LocalFileGate(roots: ["/srv/feed"])
        #expect(gate.root(containing: "/srv/feed/a.jpg")?.relativePath == "a.jpg")
        #expect(gate.root(containing: "/srv/feed-other/a.jpg") == nil)
        #expect(gate.root(containing: "/srv/feed") == nil)
    }
}
