import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A program run to its end with posix_spawn and waitpid, for tests.
///
/// Not Foundation's `Process`: its `waitUntilExit()` hung for good in a test run, the child already a zombie that
/// nothing reaped, when commands were started from several threads at once. A child of our own is reaped by the
/// thread that waits for it.
public enum ChildProcess {
    public struct Result: Sendable {
        /// The exit code, or the signal's number when a signal ended the program (as `Process.terminationStatus`).
        public var status: Int32
        public var stdout: Data
    }

    /// Runs `path` and waits for it: standard input from `stdin` (then closed), standard output captured, standard
    /// error into the file at `stderrPath`.
    /// - Parameter timeout: Seconds after which the program is killed with SIGKILL; `nil` waits for as long as it
    ///   takes.
    public static func run(
        _ path: String, _ arguments: [String], environment: [String: String], directory: String?, stdin: Data?,
        stderrPath: String, timeout: Double?
    ) throws -> Result {
        var input: [Int32] = [-1, -1]
        var output: [Int32] = [-1, -1]
        guard cloexecPipe(&input, O_CLOEXEC) == 0 else { throw failure("pipe") }
        guard cloexecPipe(&output, O_CLOEXEC) == 0 else {
            close(input[0])
            close(input[1])
            throw failure("pipe")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // The pipes' ends are close-on-exec; the copies made at 0 and 1 are not.
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if let directory { _ = addChdir(&actions, directory) }
        closeInheritedDescriptors(from: 3, in: &actions)
        var argv = ([path] + arguments).map { strdup($0) } + [nil]
        var envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var spawnedPID: pid_t = 0
        let spawned = posix_spawn(&spawnedPID, path, &actions, nil, &argv, &envp)
        let pid = spawnedPID
        close(input[0])
        close(output[1])
        guard spawned == 0 else {
            close(input[1])
            close(output[0])
            throw TestInputError(message: "cannot start \(path): \(String(cString: strerror(spawned)))")
        }
        let exited = Atomic<Bool>(false)
        if let timeout {
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
                if !exited.load(ordering: .acquiring) { kill(pid, SIGKILL) }
            }
        }
        // Standard input is written on a thread of its own, so a program that writes much before it reads never
        // waits for us while we wait for it.
        let writer = Thread { [descriptor = input[1]] in
            if let stdin {
                stdin.withUnsafeBytes { bytes in
                    var offset = 0
                    while offset < bytes.count {
                        let count = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                        if count < 0 && errno == EINTR { continue }
                        guard count > 0 else { break }
                        offset += count
                    }
                }
            }
            close(descriptor)
        }
        writer.start()
        var captured = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(output[0], $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            captured.append(contentsOf: buffer[..<count])
        }
        close(output[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        exited.store(true, ordering: .releasing)
        let signal = status & 0x7f
        return Result(status: signal == 0 ? (status >> 8) & 0xff : signal, stdout: captured)
    }

    /// Makes a child started with `actions` close every descriptor from `first` on.
    ///
    /// NIO opens its sockets without close-on-exec, so a child would otherwise inherit every connection and
    /// listening socket the test process has at that moment, and a long-lived child (the PostgreSQL server `pg_ctl`
    /// starts, a browser) would keep a connection open after the test closed its end: a test waiting for the server
    /// to see that close waited for good (RemoteFetcherTests' range-ignoring server, in about one full run in two).
    /// Add it after the actions that place the descriptors the child needs.
    public static func closeInheritedDescriptors(from first: Int32, in actions: inout posix_spawn_file_actions_t) {
        _ = addCloseFrom(&actions, first)
    }

    private static func failure(_ call: String) -> TestInputError {
        TestInputError(message: "\(call): \(String(cString: strerror(errno)))")
    }
}

// glibc's, declared here: Swift's Glibc module leaves out what only _GNU_SOURCE declares. Pipes made close-on-exec
// at once never leak into a child that another thread starts meanwhile. (Free functions of pointers and integers:
// Swift's calling convention passes them as C's does.)
@_silgen_name("pipe2")
private func cloexecPipe(_ descriptors: UnsafeMutablePointer<Int32>, _ flags: Int32) -> Int32

@_silgen_name("posix_spawn_file_actions_addclosefrom_np")
private func addCloseFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ first: Int32) -> Int32

@_silgen_name("posix_spawn_file_actions_addchdir_np")
private func addChdir(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ path: UnsafePointer<CChar>) -> Int32

extension Process {
    /// Waits for the process to end: its exit code, or the number of the signal that ended it (what
    /// `terminationStatus` says). Use it instead of `waitUntilExit()` and `terminationStatus`: that wait spun for good
    /// on a child that had already ended, a zombie Foundation never noticed (in ChildProcess's time, and again in a
    /// fresh-clone run on 2026-11-29). The child is reaped here when Foundation has not seen it end; `nil` after
    /// `timeout` seconds.
    public func waitForExit(timeout: Double = 600) -> Int32? {
        let pid = processIdentifier
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if !isRunning { return terminationStatus }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                return status & 0x7f == 0 ? (status >> 8) & 0xff : status & 0x7f
            }
            usleep(5_000)
        }
        return nil
    }
}
