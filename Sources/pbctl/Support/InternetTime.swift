#if canImport(Glibc)
import Glibc
#endif

/// Times as `pbctl history` prints them: ISO 8601 in UTC to the second, `2025-11-22T09:41:34Z`
/// (what Foundation's `ISO8601DateFormatter` writes by default, without linking Foundation).
enum InternetTime {
    /// - Parameter milliseconds: Unix time in milliseconds; the fraction of a second is dropped.
    static func string(milliseconds: Int64) -> String {
        var seconds = time_t(milliseconds / 1000 - (milliseconds % 1000 < 0 ? 1 : 0))
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil else { return String(milliseconds / 1000) }
        return digits(Int(parts.tm_year) + 1900, 4) + "-" + digits(Int(parts.tm_mon) + 1, 2) + "-" + digits(Int(parts.tm_mday), 2)
            + "T" + digits(Int(parts.tm_hour), 2) + ":" + digits(Int(parts.tm_min), 2) + ":" + digits(Int(parts.tm_sec), 2) + "Z"
    }

    /// `value` in decimal, zero-padded to `width` digits.
    private static func digits(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return text.count < width ? String(repeating: "0", count: width - text.count) + text : text
    }
}
