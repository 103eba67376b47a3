/// Says when to log the failures of work retried every second until it succeeds (the commit
/// log's save, an expiry's clear): the first failure, a failure of another kind, then ever
/// fewer repeats of the same one (the 10th, the 60th, then every 600th), and the recovery.
///
/// A store that stays away (its directory deleted under the server, a disk remounted
/// read-only) would otherwise write a line a second to the journal for as long as the server
/// runs, burying what came before it.
struct RetryReport {
    /// The failures in a row so far.
    private(set) var failures = 0
    private var lastLogged: String?

    /// Counts a failure described by `description`; whether to log it.
    mutating func failed(_ description: String) -> Bool {
        failures += 1
        let log = description != lastLogged || failures == 10 || failures == 60 || failures % 600 == 0
        if log { lastLogged = description }
        return log
    }

    /// What to append to a failure's log line: how many failures in a row it makes, when more
    /// than one.
    var repeats: String {
        failures > 1 ? " (\(failures) failures in a row)" : ""
    }

    /// Ends a run of failures; returns how many there were (0 when none).
    mutating func succeeded() -> Int {
        defer { (failures, lastLogged) = (0, nil) }
        return failures
    }
}
