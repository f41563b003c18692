import Foundation
import NIOHTTP1

/// How long a response may be used without asking its server again, by its own headers (RFC 9111 §4.2): what the
/// probe cache keeps with a photo's probe, so that a photo still fresh is not requested again.
///
/// A shared cache's reading: `s-maxage`, else `max-age`, else `Expires` minus `Date` (or minus the time it arrived,
/// without `Date`), less the `Age` the response already had. `no-cache`, `private` (the probe cache serves every
/// client) and `must-revalidate` with no lifetime leave no freshness: the probe is revalidated with a conditional
/// request at every use, as before freshness was kept. No lifetime is guessed from `Last-Modified` (the heuristic
/// RFC 9111 allows): a server that says nothing is asked every time. `no-store` asks that nothing be kept at all.
public struct HTTPFreshness: Sendable, Equatable {
    /// Seconds the response stays fresh from when it arrived; 0 when it must be revalidated at every use.
    public var lifetime: Double
    /// `Cache-Control: no-store`: keep nothing of the response.
    public var noStore: Bool

    public init(lifetime: Double, noStore: Bool) {
        self.lifetime = lifetime
        self.noStore = noStore
    }

    /// The freshness of a response with these headers, received at `received`.
    public init(headers: HTTPHeaders, received: Date) {
        var directives: [String: String?] = [:]
        for value in headers["Cache-Control"] {
            for part in value.split(separator: ",") {
                let pair = part.split(separator: "=", maxSplits: 1)
                guard let name = pair.first?.trimmingCharacters(in: .whitespaces).lowercased(), !name.isEmpty else {
                    continue
                }
                let argument = pair.count > 1
                    ? pair[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                    : nil
                // The first occurrence of a directive counts.
                if directives[name] == nil { directives[name] = .some(argument) }
            }
        }
        noStore = directives["no-store"] != nil
        func seconds(_ name: String) -> Double? {
            guard let argument = directives[name], let text = argument, let value = Int(text), value >= 0 else {
                return nil
            }
            return Double(value)
        }
        if noStore || directives["no-cache"] != nil || directives["private"] != nil {
            lifetime = 0
            return
        }
        var base: Double?
        if let shared = seconds("s-maxage") {
            base = shared
        } else if let own = seconds("max-age") {
            base = own
        } else if let expires = headers.first(name: "Expires") {
            // An Expires that cannot be read means "already expired" (RFC 9111 §5.3).
            if let expiry = Self.httpDate(expires) {
                let date = headers.first(name: "Date").flatMap(Self.httpDate) ?? received
                base = expiry.timeIntervalSince(date)
            } else {
                base = 0
            }
        }
        let age = headers.first(name: "Age").flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }.map(Double.init) ?? 0
        lifetime = max(0, (base ?? 0) - age)
    }

    /// An HTTP date (IMF-fixdate, the obsolete RFC 850 form, or asctime), as RFC 9110 §5.6.7 asks a recipient to read.
    static func httpDate(_ text: String) -> Date? {
        let text = text.trimmingCharacters(in: .whitespaces)
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }
}
