import Foundation

/// When a subscription's feed is fetched next: what the server and the feed say about its freshness, clamped to the
/// subscription's `minSeconds`/`maxSeconds` and the service's floor (`--min-refresh`), with a jitter of its own; and
/// an exponential backoff after failures.
///
/// The interval, in whole seconds:
/// - after a good fetch (`200` or `304`): the longest of the response's freshness (`Cache-Control: max-age` less
///   `Age`, else `Expires` less `Date`) and the feed's own hints (RSS `<ttl>`, `sy:updatePeriod` /
///   `sy:updateFrequency`), or the least allowed when there is none;
/// - after the `n`-th failure in a row: the least allowed × 2^(n-1), or the server's `Retry-After` (on `429` and
///   `503`) when longer;
/// - clamped to [max(minSeconds, floor), max(maxSeconds, that)];
/// - plus a jitter of up to a tenth of it, a fraction fixed by the subscription's id (so that subscriptions made
///   together drift apart, and a test knows the exact time), never past the upper bound.
struct RefreshSchedule: Sendable {
    var minSeconds: Int
    var maxSeconds: Int
    /// `--min-refresh`.
    var floorSeconds: Int

    var lower: Int { max(1, minSeconds, floorSeconds) }
    var upper: Int { max(maxSeconds, lower) }

    /// The interval after a good fetch whose freshness hint (the longest found, in seconds) is `hint`.
    func afterSuccess(hint: Int?, id: String) -> Int {
        jittered(clamped(hint ?? lower), id: id)
    }

    /// The interval after the `failures`-th failure in a row (1 for the first), with the server's `Retry-After`.
    func afterFailure(_ failures: Int, retryAfter: Int?, id: String) -> Int {
        let exponent = min(max(0, failures - 1), 30)
        let backoff = lower.multipliedReportingOverflow(by: 1 << exponent)
        let base = backoff.overflow ? upper : backoff.partialValue
        return jittered(clamped(max(base, retryAfter ?? 0)), id: id)
    }

    private func clamped(_ seconds: Int) -> Int { min(max(seconds, lower), upper) }

    private func jittered(_ seconds: Int, id: String) -> Int {
        min(upper, seconds + Int((Double(seconds) * 0.1 * Self.jitterFraction(id: id)).rounded(.down)))
    }

    /// A fraction in [0, 1) fixed by a subscription's id: its first eight hex digits over 2^32.
    static func jitterFraction(id: String) -> Double {
        guard let value = UInt32(id.prefix(8), radix: 16) else { return 0 }
        return Double(value) / 4_294_967_296
    }

    // MARK: Hints

    /// How long a response stays fresh, in seconds: `Cache-Control: max-age` (less `Age`), else `Expires` less
    /// `Date` (or less `now`); `nil` without either, and 0 for `no-cache` / `no-store`.
    static func freshness(headers: [String: String], now: Date) -> Int? {
        if let control = headers["cache-control"]?.lowercased() {
            let directives = control.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            if directives.contains("no-cache") || directives.contains("no-store") { return 0 }
            for directive in directives where directive.hasPrefix("max-age=") {
                guard let seconds = Int(directive.dropFirst(8).trimmingCharacters(in: CharacterSet(charactersIn: "\" ")))
                else { continue }
                let age = headers["age"].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } ?? 0
                return max(0, seconds - max(0, age))
            }
        }
        if let expiresText = headers["expires"] {
            // An invalid date (often "0") means already expired.
            guard let expires = httpDate(expiresText) else { return 0 }
            let date = headers["date"].flatMap(httpDate) ?? now
            return max(0, Int(expires.timeIntervalSince(date).rounded(.down)))
        }
        return nil
    }

    /// `Retry-After`: seconds, or an HTTP date (less `now`).
    static func retryAfter(_ value: String?, now: Date) -> Int? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Int(value) { return max(0, seconds) }
        return httpDate(value).map { max(0, Int($0.timeIntervalSince(now).rounded(.up))) }
    }

    /// The feed's own refresh hints, in seconds: RSS `<ttl>` (minutes) and the syndication module's
    /// `updatePeriod` / `updateFrequency` (any prefix), the longer if both; looked for in the first 64 KiB (the
    /// channel's head).
    static func feedHint(_ feed: [UInt8]) -> Int? {
        let head = String(decoding: feed.prefix(64 * 1024), as: UTF8.self)
        var hints: [Int] = []
        if let minutes = elementText(head, localName: "ttl", prefixed: false).flatMap({ Int($0) }), minutes > 0 {
            hints.append(minutes.multipliedReportingOverflow(by: 60).overflow ? Int.max / 2 : minutes * 60)
        }
        if let period = elementText(head, localName: "updatePeriod", prefixed: true)?.lowercased() {
            let seconds: Int? =
                switch period {
                case "hourly": 3_600
                case "daily": 86_400
                case "weekly": 604_800
                case "monthly": 2_592_000
                case "yearly": 31_536_000
                default: nil
                }
            let frequency = elementText(head, localName: "updateFrequency", prefixed: true).flatMap { Int($0) } ?? 1
            if let seconds, frequency > 0 { hints.append(max(1, seconds / frequency)) }
        }
        return hints.max()
    }

    /// The trimmed text of the first `<localName>` element (or `<prefix:localName>` when `prefixed`) in `text`.
    private static func elementText(_ text: String, localName: String, prefixed: Bool) -> String? {
        let pattern =
            prefixed
            ? "<[A-Za-z_][A-Za-z0-9_.-]*:\(localName)\\s*>\\s*([^<]{1,64}?)\\s*</"
            : "<\(localName)\\s*>\\s*([^<]{1,64}?)\\s*</"
        guard let expression = try? NSRegularExpression(pattern: pattern),
            let match = expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
            let range = Range(match.range(at: 1), in: text)
        else { return nil }
        return String(text[range])
    }

    /// An HTTP date (RFC 9110's preferred form, and the two obsolete ones).
    static func httpDate(_ text: String) -> Date? {
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: text.trimmingCharacters(in: .whitespaces)) { return date }
        }
        return nil
    }
}
