/// The options of `WriteItems`, `WriteItemsFd` and `WritePromised`, decoded and checked.
struct WriteOptions: Sendable, Equatable {
    /// Write only if the change count equals this (`if-change-count`).
    var ifChangeCount: UInt64? = nil
    /// Add the items to the current contents instead of replacing them (`append`).
    var append = false
}
