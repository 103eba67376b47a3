import DBus
import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#endif

// MARK: 4 and 5. Large contents and the server's memory

extension Measurements {
    /// What the client hands `WriteItemsFd`.
    enum LargeSource: String {
        /// A memfd the client fills before the call (inside the timed region), as a client that
        /// hands over its data in a memfd would.
        case memfd
        /// A pipe the client writes into while the server reads it, as `cat file | pbctl copy`.
        case pipe
    }

    /// `size` bytes through `WriteItemsFd` and `ReadFd` read to the end, against a socketpair
    /// copy of the same size; and, for a memfd, the server's resident memory holding and serving it.
    func largeTransfer(size: Int, times: Int, through source: LargeSource) async throws -> [Figure] {
        let client = try fixture.connect()
        defer { client.close() }
        guard client.canPassFileDescriptors else { throw BenchError("the bus does not pass file descriptors") }
        let chunk = [UInt8]((0..<(64 * Self.mebibyte)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) })
        // The ceiling moves the same bytes in 1 MiB writes, as the kernel does best.
        let slice = Array(chunk.prefix(Self.mebibyte))
        let label = size >= 1 << 30 ? "\(size >> 30) GiB" : "\(size >> 20) MiB"
        let mebibytes = Double(size) / Double(Self.mebibyte)
        var server = Sample(), floor = Sample(), holding = Sample(), serving = Sample()
        var fill = Sample(), call = Sample(), read = Sample(), floorMilliseconds = Sample(), plain = Sample()
        let plainCopy = source == .pipe ? try PlainCopy(in: fixture.directory + "/state") : nil
        // One warm-up round each, not counted: the first copies of a run fault in fresh memory.
        for index in 0..<(times + 1) {
            let floorTime = try Self.socketpairCopy(slice, size: size)
            let plainTime = try plainCopy?.copy(chunk, size: size) ?? 0
            var round = RoundTrip()
            let transfer = try await timed {
                round = try await fdRoundTrip(client, chunk, size: size, through: source)
            }
            guard index > 0 else { continue }
            floor.add(mebibytes / (floorTime / 1_000_000))
            server.add(mebibytes / (transfer.micros / 1_000_000))
            holding.add(Double(round.holding) / Double(Self.mebibyte))
            serving.add(Double(round.serving) / Double(Self.mebibyte))
            fill.add(round.fill / 1_000)
            call.add(round.call / 1_000)
            read.add(round.read / 1_000)
            floorMilliseconds.add(floorTime / 1_000)
            if plainTime > 0 { plain.add(mebibytes / (plainTime / 1_000_000)) }
        }
        _ = try await Self.server(client, "ClearContents", [.string("bench-large")])
        let throughput = Figure(
            "\(label) WriteItemsFd (\(source.rawValue)) + ReadFd", unit: "MiB/s", median: server.median, p99: server.percentile(0.01),
            count: server.count, floor: (floor.median, floor.percentile(0.01)), floorName: "socketpair", goal: .ratioAtLeast(0.30))
        // Where the time goes, each step against the socketpair's whole copy: a step that
        // alone takes more than 1 / 0.30 of it leaves the goal out of reach of the others.
        func step(_ name: String, _ sample: Sample) -> Figure {
            Figure("  \(name)", unit: "ms", sample, floor: floorMilliseconds, floorName: "socketpair copy", goal: .informational)
        }
        // For a pipe, what the same copies reach without D-Bus or a server (see PlainCopy).
        let bound = plain.count == 0 ? [] : [Figure(
            "  the same copies, no server", unit: "MiB/s", median: plain.median, p99: plain.percentile(0.01), count: plain.count,
            floor: (floor.median, floor.percentile(0.01)), floorName: "socketpair", goal: .informational)]
        let steps = bound + (source == .memfd ? [step("the client filling its memfd", fill)] : [])
            + [step(source == .memfd ? "WriteItemsFd" : "WriteItemsFd, the pipe written meanwhile", call), step("ReadFd and reading to the end", read)]
        guard source == .memfd else { return [throughput] + steps }
        return [throughput] + steps + [
            Figure("server RSS holding \(label)", unit: "MiB", holding, floor: nil, floorName: nil, goal: .below(64)),
            Figure("server RSS serving \(label)", unit: "MiB", serving, floor: nil, floorName: nil, goal: .below(64)),
        ]
    }

    /// One round of ``fdRoundTrip(_:_:size:through:)``: the server's resident bytes after the
    /// write and halfway through the read, and how long each step took (µs).
    struct RoundTrip {
        var holding = 0
        var serving = 0
        /// Filling the memfd (0 for a pipe, written while the call runs).
        var fill = 0.0
        /// The `WriteItemsFd` call, from sending it to its reply (for a pipe, to the writer's end).
        var call = 0.0
        /// `ReadFd`, and reading its descriptor to the end.
        var read = 0.0
    }

    /// Writes `size` bytes (repeating `chunk`) through a memfd or a pipe, reads them back
    /// through `ReadFd`, and says how long each step took and what the server held.
    private func fdRoundTrip(_ client: Connection, _ chunk: [UInt8], size: Int, through source: LargeSource) async throws -> RoundTrip {
        let name = "bench-large"
        var writing: DispatchSemaphore? = nil
        var round = RoundTrip()
        let start = monotonicNanoseconds()
        // The call holds its own copy of the descriptor: the client's is closed once the call is
        // built, as a client that hands its data over would. The last copy then goes with a
        // message, which both sides let go of off the threads that wait (see `Message`): freeing
        // a memfd's pages is neither the server's reply's nor this client's to wait for.
        let call = try { () throws -> Message in
            let descriptor: UnixFileDescriptor
            switch source {
            case .memfd:
                descriptor = try UnixFileDescriptor.memoryFile(name: "pasteboard-bench")
                try Self.writeRepeating(chunk, size: size, to: descriptor.rawValue)
                lseek(descriptor.rawValue, 0, SEEK_SET)
            case .pipe:
                var ends: [Int32] = [0, 0]
                guard pipe(&ends) == 0 else { throw BenchError("pipe: \(String(cString: strerror(errno)))") }
                ends.forEach { _ = fcntl($0, F_SETFD, FD_CLOEXEC) }
                descriptor = UnixFileDescriptor(owning: ends[0])
                writing = Self.writeInBackground(chunk, size: size, to: ends[1])
            }
            let item = DBusValue.dictionary(key: "s", value: "h", [(.string(Self.type), .unixFD(descriptor))])
            return try Self.serverCall("WriteItemsFd", [.string(name), .array(element: "a{sh}", [item]), Self.noOptions])
        }()
        let called = monotonicNanoseconds()
        if source == .memfd { round.fill = Double(called - start) / 1_000 }
        _ = try await client.call(call)
        writing?.wait()
        let written = monotonicNanoseconds()
        round.call = Double(written - called) / 1_000
        // Untimed: the step after starts its clock anew.
        round.holding = try fixture.serverResidentBytes()
        let reading = monotonicNanoseconds()
        let reply = try await Self.server(client, "ReadFd", [.string(name), .uint32(0), .string(Self.type), .uint64(0)])
        guard let readable = reply.dropFirst().first?.fileDescriptorValue else { throw BenchError("ReadFd returned no descriptor") }
        let total = try Self.readToEnd(readable.rawValue) { sofar in
            if round.serving == 0, sofar >= size / 2 { round.serving = (try? fixture.serverResidentBytes()) ?? 0 }
        }
        round.read = Double(monotonicNanoseconds() - reading) / 1_000
        guard total == size else { throw BenchError("ReadFd gave \(total) bytes, not \(size)") }
        return round
    }

    /// Writes `size` bytes (repeating `chunk`) to `fd` on a thread of its own, then closes `fd`;
    /// the semaphore is signalled when it is done.
    static func writeInBackground(_ chunk: [UInt8], size: Int, to fd: Int32) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        Thread {
            try? writeRepeating(chunk, size: size, to: fd)
            close(fd)
            done.signal()
        }.start()
        return done
    }

    /// Microseconds to copy `size` bytes from one thread to another through a unix socketpair,
    /// in 1 MiB writes and reads.
    private static func socketpairCopy(_ chunk: [UInt8], size: Int) throws -> Double {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw BenchError("socketpair: \(String(cString: strerror(errno)))")
        }
        let reader = fds[0]
        defer { close(reader) }
        // The best the kernel does: buffers widened to hold several 1 MiB writes (forced past
        // the system's limit when the bench may, as root).
        for fd in fds {
            var size: Int32 = 8 << 20
            for (option, forced) in [(SO_SNDBUF, SO_SNDBUFFORCE), (SO_RCVBUF, SO_RCVBUFFORCE)] {
                if setsockopt(fd, SOL_SOCKET, forced, &size, socklen_t(MemoryLayout<Int32>.size)) != 0 {
                    _ = setsockopt(fd, SOL_SOCKET, option, &size, socklen_t(MemoryLayout<Int32>.size))
                }
            }
        }
        let start = monotonicNanoseconds()
        let writing = writeInBackground(chunk, size: size, to: fds[1])
        let total = try readToEnd(reader) { _ in }
        writing.wait()
        guard total == size else { throw BenchError("the socketpair carried \(total) bytes, not \(size)") }
        return Double(monotonicNanoseconds() - start) / 1_000
    }

    /// Writes `size` bytes to `fd`, `chunk` after `chunk`.
    private static func writeRepeating(_ chunk: [UInt8], size: Int, to fd: Int32) throws {
        var written = 0
        while written < size {
            let count = min(chunk.count, size - written)
            let failure = UnixFileDescriptor.writeAll(fd, chunk[..<count])
            guard failure == 0 else { throw BenchError("write: \(String(cString: strerror(failure)))") }
            written += count
        }
    }

    /// Reads `fd` to its end in 1 MiB reads; `progress` sees the running total.
    static func readToEnd(_ fd: Int32, progress: (Int) -> Void) throws -> Int {
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: mebibyte, alignment: 16)
        defer { buffer.deallocate() }
        var total = 0
        while true {
            let count = read(fd, buffer, mebibyte)
            if count < 0 {
                if errno == EINTR { continue }
                throw BenchError("read: \(String(cString: strerror(errno)))")
            }
            if count == 0 { return total }
            total += count
            progress(total)
        }
    }
}
