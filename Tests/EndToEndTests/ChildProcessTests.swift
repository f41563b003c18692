import FeedLayoutTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The test support's own process runner: what a child it starts may hold of the test process.
struct ChildProcessTests {
    /// A socket opened without close-on-exec (as NIO opens every socket) must not reach the child: a long-lived
    /// child holding a copy keeps the connection open after the test process has closed it.
    @Test func aChildInheritsNoSocketOfTheTestProcess() throws {
        let opened = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(opened >= 0)
        // Far above what the child's own standard descriptors and `ls`'s directory use.
        let socketDescriptor = fcntl(opened, F_DUPFD, 200)
        close(opened)
        try #require(socketDescriptor >= 200)
        defer { close(socketDescriptor) }
        #expect(fcntl(socketDescriptor, F_GETFD) & FD_CLOEXEC == 0)
        let stderrPath = try CommandRunner.temporaryDirectory().appendingPathComponent("stderr").path
        let result = try ChildProcess.run(
            "/bin/ls", ["/proc/self/fd"], environment: [:], directory: nil, stdin: nil, stderrPath: stderrPath,
            timeout: 60)
        #expect(result.status == 0)
        let descriptors = Set(String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map(String.init))
        #expect(descriptors.isSuperset(of: ["0", "1", "2"]))
        #expect(!descriptors.contains("\(socketDescriptor)"), "the child holds \(descriptors.sorted())")
        #expect(descriptors.allSatisfy { (Int($0) ?? 0) <= 3 }, "the child holds \(descriptors.sorted())")
    }
}
