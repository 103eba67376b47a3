#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ProcessSpawning

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

    /// Runs `path` with `arguments`, standard input and output on `/dev/null` and no other
    /// descriptor of this process (an app's own files must not leak into it), and waits for
    /// it.
    static func run(_ path: String, arguments: [String]) -> ProgramRun {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            return ProgramRun(status: -1, errorOutput: String(cString: strerror(errno)))
        }
        // Neither end may leak into programs other threads start meanwhile; the child's
        // standard error is a duplicate, which does not inherit the flag.
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        let child: pid_t
        do {
            child = try spawn(
                path, arguments, standardInput: .open("/dev/null", flags: O_RDONLY, mode: 0),
                standardOutput: .open("/dev/null", flags: O_WRONLY, mode: 0), standardError: .duplicate(ends[1]))
        } catch {
            close(ends[0])
            close(ends[1])
            return ProgramRun(status: -1, errorOutput: "\(error)")
        }
        close(ends[1])
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(ends[0], $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            output += buffer[0..<count]
        }
        close(ends[0])
        return ProgramRun(status: reap(child) ?? -1, errorOutput: String(decoding: output, as: UTF8.self))
    }
}
