import Foundation

/// What a finished process left: its exit status and everything it wrote.
public struct RunResult: Sendable, CustomStringConvertible {
    public let status: Int32
    public let stdout: Data
    public let stderr: Data

    public var out: String { String(decoding: stdout, as: UTF8.self) }
    public var err: String { String(decoding: stderr, as: UTF8.self) }
    public var description: String { "status \(status)\nstdout: \(out)\nstderr: \(err)" }
}

/// Runs a program to completion with `input` on stdin, killing it after `timeout` seconds.
public func run(
    _ executable: String, _ arguments: [String], input: Data = Data(),
    environment: [String: String] = [:], timeout: Double = 60
) throws -> RunResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    env["DBUS_SESSION_BUS_ADDRESS"] = nil
    for (key, value) in environment { env[key] = value }
    process.environment = env
    let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
    process.standardInput = stdin
    process.standardOutput = stdout
    process.standardError = stderr
    try process.run()

    let group = DispatchGroup()
    nonisolated(unsafe) var out = Data(), err = Data()
    group.enter()
    DispatchQueue.global().async { out = stdout.fileHandleForReading.readDataToEndOfFile(); group.leave() }
    group.enter()
    DispatchQueue.global().async { err = stderr.fileHandleForReading.readDataToEndOfFile(); group.leave() }
    // A program that exits without reading all its input must fail the write, not kill the tests.
    signal(SIGPIPE, SIG_IGN)
    DispatchQueue.global().async {
        try? stdin.fileHandleForWriting.write(contentsOf: input)
        try? stdin.fileHandleForWriting.close()
    }
    if group.wait(timeout: .now() + timeout) == .timedOut {
        process.terminate()
        kill(process.processIdentifier, SIGKILL)
        group.wait()
        process.waitUntilExit()
        throw TestSupportError("\(executable) \(arguments) did not finish within \(timeout) s")
    }
    process.waitUntilExit()
    return RunResult(status: process.terminationStatus, stdout: out, stderr: err)
}
