/// The options of `WriteItems`, `WriteItemsFd` and `WritePromised`, decoded and checked.
struct WriteOptions: Sendable, Equatable {
    /// Write only if the change count equals this (`if-change-count`).
    var ifChangeCount: UInt64? = nil
    /// Add the items to the current contents instead of replacing them (`append`).
    var append = false
    /// Clear the contents this many milliseconds after the write (`expires-in-ms`).
    var expiresInMilliseconds: UInt64? = nil
    /// Clear the contents at this Unix time in milliseconds: a `Restore` of contents written
    /// to expire keeps their deadline. (Not a bus option.)
    var expiresAt: UInt64? = nil
    /// A secret: never on disk, never in history, no types in `Changed` (`concealed`).
    var concealed = false
    /// Not in history, not on disk (`transient`).
    var transient = false
    /// Only the writing process may read the data (`owner-only`).
    var ownerOnly = false

    /// Whether the contents must stay off the disk.
    var isVolatile: Bool { concealed || transient }
}
