#if canImport(Glibc)
import Glibc
#endif
import PasteboardModel

/// A small file, mapped into memory, where a change is recorded before it is answered when the
/// database cannot take it at once.
///
/// A small write is answered on the bus thread (see ``PasteboardService/logBatch()``): an
/// SQLite transaction there would make the bus wait on the disk, and one on the service queue
/// costs two thread hops. Instead the change's rows are copied into this mapping, which is the
/// file's page cache: once the copy is made, the change survives `kill -9` of the server, as a
/// transaction committed with `synchronous=NORMAL` does, and no system call was made. The
/// service queue then applies the recorded changes to the database, several per transaction,
/// and starts the log over (``reset()``). A start applies whatever a killed server left here
/// before it loads the database.
///
/// The file's blocks are reserved when it is created, so a store into the mapping can never
/// meet a full disk (which would kill the process with SIGBUS), and its pages are read in at
/// start, so a store never waits for a page to be read. A store is not free of the file
/// system altogether: the first store to a page after start or after the kernel wrote it back
/// takes a write fault (`page_mkwrite`), which on ext4 may briefly wait for the journal or
/// for the page's writeback to finish. That is a short wait, but not none.
///
/// Layout: a header (magic, generation), then records, each `[length, generation, checksum,
/// payload]`, padded to 8 bytes. Records of the current generation, from the first on, are the
/// log; ``reset()`` moves to the next generation, which makes every older record invisible.
/// A record cut short or damaged fails its checksum and ends the log. So does a zero length,
/// which is written after the last record (before the record itself): the bytes past the end
/// are older records, whose payloads hold clipboard data any client chose, and a run of them
/// shaped like a record of a later generation must never be read as one.
///
/// Not thread-safe: the holder of the service's turn is its only user.
final class CommitLog {
    static let fileName = "commits.log"
    /// Bytes of records the log holds.
    static let capacity = 1 << 20
    private static let magic: UInt64 = 0x3167_6F6C_6264_7000  // "pbdlog1"
    private static let headerSize = 64
    private static let recordHeaderSize = 24

    private let base: UnsafeMutableRawPointer
    private let size: Int
    private var generation: UInt64
    /// Where the next record goes.
    private var end: Int

    /// Opens (creating if need be) the log at `path`, sized for ``capacity`` bytes of records.
    init(path: String) throws {
        size = Self.headerSize + Self.capacity
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw PasteboardStoreError("cannot open the commit log \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        // Reserves the blocks: a store into a hole of a full disk would be SIGBUS.
        let reserved = posix_fallocate(fd, 0, off_t(size))
        guard reserved == 0 else { throw PasteboardStoreError("cannot reserve \(size) bytes for the commit log: \(String(cString: strerror(reserved)))") }
        guard let mapping = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0), mapping != MAP_FAILED else {
            throw PasteboardStoreError("cannot map the commit log: \(String(cString: strerror(errno)))")
        }
        base = mapping
        end = Self.headerSize
        if base.load(as: UInt64.self) == Self.magic.littleEndian {
            generation = UInt64(littleEndian: base.load(fromByteOffset: 8, as: UInt64.self))
        } else {
            // New, or not a log: start one.
            generation = 1
            base.storeBytes(of: generation.littleEndian, toByteOffset: 8, as: UInt64.self)
            base.storeBytes(of: Self.magic.littleEndian, as: UInt64.self)
        }
    }

    deinit {
        munmap(base, size)
    }

    /// Whether a record with a payload of `length` bytes fits.
    func hasRoom(for length: Int) -> Bool {
        end + Self.recordHeaderSize + Self.padded(length) <= size
    }

    /// Adds a record; false when there is no room (nothing is written then). An empty record
    /// would read as the end of the log: it is refused too.
    func append(_ payload: [UInt8]) -> Bool {
        guard !payload.isEmpty, hasRoom(for: payload.count) else { return false }
        let record = base + end
        markEnd(at: end + Self.recordHeaderSize + Self.padded(payload.count))
        payload.withUnsafeBytes { (record + Self.recordHeaderSize).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        record.storeBytes(of: UInt64(payload.count).littleEndian, as: UInt64.self)
        record.storeBytes(of: generation.littleEndian, toByteOffset: 8, as: UInt64.self)
        record.storeBytes(of: Self.checksum(generation, payload).littleEndian, toByteOffset: 16, as: UInt64.self)
        end += Self.recordHeaderSize + Self.padded(payload.count)
        return true
    }

    /// The payloads of the log's records, in order, and whether it ended in a damaged record
    /// (one cut short by a crash in the middle of its copy ends the log the same way).
    func records() -> (payloads: [[UInt8]], damaged: Bool) {
        var payloads: [[UInt8]] = []
        var offset = Self.headerSize
        while offset + Self.recordHeaderSize <= size {
            let record = base + offset
            let length = UInt64(littleEndian: record.load(as: UInt64.self))
            let recordGeneration = UInt64(littleEndian: record.load(fromByteOffset: 8, as: UInt64.self))
            guard recordGeneration == generation, length > 0 else { break }
            guard length <= UInt64(size - offset - Self.recordHeaderSize) else { return (payloads, true) }
            let payload = [UInt8](UnsafeRawBufferPointer(start: record + Self.recordHeaderSize, count: Int(length)))
            guard UInt64(littleEndian: record.load(fromByteOffset: 16, as: UInt64.self)) == Self.checksum(generation, payload) else {
                return (payloads, true)
            }
            payloads.append(payload)
            offset += Self.recordHeaderSize + Self.padded(payload.count)
        }
        end = offset
        return (payloads, false)
    }

    /// Starts the log over, once its records are in the database: the next generation's first
    /// record goes at the start, and the older ones no longer count.
    func reset() {
        generation &+= 1
        base.storeBytes(of: generation.littleEndian, toByteOffset: 8, as: UInt64.self)
        end = Self.headerSize
        markEnd(at: end)
    }

    /// A zero length at `offset`, where a reader stops, when a record header fits there.
    private func markEnd(at offset: Int) {
        guard offset + Self.recordHeaderSize <= size else { return }
        (base + offset).storeBytes(of: UInt64(0), as: UInt64.self)
    }

    private static func padded(_ length: Int) -> Int {
        (length + 7) & ~7
    }

    /// FNV-1a over the generation and the payload: enough to tell a whole record from one cut
    /// short or left over.
    private static func checksum(_ generation: UInt64, _ payload: [UInt8]) -> UInt64 {
        var hash = FNV1a()
        withUnsafeBytes(of: generation.littleEndian) { hash.add($0) }
        hash.add(payload)
        return hash.value
    }
}
