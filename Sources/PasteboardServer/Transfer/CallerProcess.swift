#if canImport(Glibc)
import Glibc
#endif

/// Whether a client's process is dying, read from `/proc`: the certain way to tell that the end
/// of a pipe it wrote was its death, not the end of its data.
///
/// When a process is killed, the kernel marks it exiting (`PF_EXITING`) before it closes its
/// descriptors, so by the time the server reads the end of a pipe the dying process held, the
/// mark is there, or the process is already a zombie. The bus learns of the death a moment
/// later (when it reads the closed connection), so asking the bus alone (``CallerWatch``, the
/// question before a commit) could find the client still there and store what a killed
/// `pbctl copy` had passed on so far, as a complete copy.
///
/// Only a process that exists and whose every thread is exiting counts: one that cannot be
/// found (gone and reaped) is left to the bus's answer. The process ID is the bus's
/// (`GetConnectionUnixProcessID`), as for owner-only data: a server in another PID namespace than
/// the bus would read another process's state here.
enum CallerProcess {
    /// `PF_EXITING`, in the flags `/proc/PID/stat` shows (its ninth field).
    private static let exitingFlag: UInt = 0x4

    /// Whether every thread of process `pid` is exiting (a main thread that ended alone, as
    /// `pthread_exit` leaves it, does not make its process a dying one).
    static func isEnding(_ pid: UInt32) -> Bool {
        guard pid > 0, let tasks = opendir("/proc/\(pid)/task") else { return false }
        defer { closedir(tasks) }
        var threads = 0
        while let entry = readdir(tasks) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let thread = UInt32(name) else { continue }
            // A thread gone since the listing has ended.
            guard let stat = readStat("/proc/\(pid)/task/\(thread)/stat") else { continue }
            guard isExiting(stat) else { return false }
            threads += 1
        }
        return threads > 0
    }

    /// Whether a thread's `stat` says it is exiting or has ended.
    private static func isExiting(_ stat: [UInt8]) -> Bool {
        guard let close = stat.lastIndex(of: UInt8(ascii: ")")) else { return false }
        // After the command's name (in parentheses, and free to hold spaces and parentheses):
        // state, ppid, pgrp, session, tty_nr, tpgid, flags.
        let fields = stat[(close + 1)...].split(separator: UInt8(ascii: " "))
        guard fields.count > 6, let state = fields.first?.first else { return false }
        // Zombie, or dead (`x` on kernels before 3.14).
        if state == UInt8(ascii: "Z") || state == UInt8(ascii: "X") || state == UInt8(ascii: "x") { return true }
        guard let flags = UInt(String(decoding: fields[6], as: UTF8.self)) else { return false }
        return flags & exitingFlag != 0
    }

    private static func readStat(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return Array(buffer[..<count])
    }
}
