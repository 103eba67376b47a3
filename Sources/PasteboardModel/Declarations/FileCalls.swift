#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The few file and process calls a declaration needs, with `errno` kept for the message:
/// Foundation's errors say "the operation could not be completed", which tells nobody what
/// to do.
enum FileCalls {
    /// `mkdir -p`; the `errno` of the failure, or `nil`.
    static func makeDirectories(_ path: String) -> Int32? {
        var current = ""
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o755) != 0, errno != EEXIST { return errno }
        }
        return nil
    }

    /// Writes a whole file (created or truncated) and flushes it to disk; the `errno` of the
    /// failure, or `nil`.
    static func write(_ data: Data, to path: String) -> Int32? {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return errno }
        defer { close(descriptor) }
        let failure: Int32? = data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += written
            }
            return nil
        }
        if let failure { return failure }
        return fsync(descriptor) == 0 ? nil : errno
    }
}

/// A program run to its end, with what it wrote to standard error.
struct ProgramRun {
    let status: Int32
    let errorOutput: String

    /// Runs `path` with `arguments` (standard input and output closed to it), waits for it.
    static func run(_ path: String, arguments: [String]) -> ProgramRun {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else {
            return ProgramRun(status: -1, errorOutput: String(cString: strerror(errno)))
        }
        // Neither end may leak into programs other threads start meanwhile.
        _ = fcntl(pipeEnds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(pipeEnds[1], F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 2)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, path, &actions, nil, argv, environ)
        close(pipeEnds[1])
        guard spawned == 0 else {
            close(pipeEnds[0])
            return ProgramRun(status: -1, errorOutput: "cannot start \(path): \(String(cString: strerror(spawned)))")
        }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(pipeEnds[0], $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            output += buffer[0..<count]
        }
        close(pipeEnds[0])
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0, errno == EINTR {}
        let exited = (status & 0x7F) == 0
        return ProgramRun(status: exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F), errorOutput: String(decoding: output, as: UTF8.self))
    }
}
