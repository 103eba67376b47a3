import CDBus
import Foundation
@testable import PasteboardServer
import Testing

/// Only a few pipes are widened to 1 MiB at once, the others to the narrower size asked for;
/// a pipe given back frees its place, and none is ever narrowed.
struct WidePipesTests {
    private static func pipe() -> (Int32, Int32) {
        var ends: [Int32] = [-1, -1]
        #expect(pipe2(&ends, O_CLOEXEC) == 0)
        return (ends[0], ends[1])
    }

    private static func size(_ fd: Int32) -> Int32 {
        cdbus_fcntl(fd, cdbus_F_GETPIPE_SZ)
    }

    @Test func onlyTheFirstFewAreWideUntilOneIsGivenBack() {
        let wide = WidePipes(most: 2)
        let pipes = (0..<4).map { _ in Self.pipe() }
        defer { pipes.forEach { close($0.0); close($0.1) } }
        let taken = pipes.prefix(3).map { wide.widen($0.1, otherwise: 256 << 10) }
        #expect(taken == [true, true, false])
        #expect(pipes.prefix(3).map { Self.size($0.0) } == [WidePipes.size, WidePipes.size, 256 << 10])
        wide.giveBack()
        #expect(wide.widen(pipes[3].1, otherwise: 256 << 10))
        #expect(Self.size(pipes[3].0) == WidePipes.size)
    }

    @Test func aPipeWiderThanAskedIsLeftAsItIs() {
        let wide = WidePipes(most: 0)
        let (read, write) = Self.pipe()
        defer { close(read); close(write) }
        #expect(cdbus_fcntl_int(write, cdbus_F_SETPIPE_SZ, 512 << 10) == 512 << 10)
        #expect(!wide.widen(write, otherwise: 256 << 10))
        #expect(Self.size(read) == 512 << 10)
    }
}
