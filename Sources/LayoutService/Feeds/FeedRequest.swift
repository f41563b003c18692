import Foundation
import HTTPTypes
import LayoutPages
import RemoteFetch

/// A client's request for a subscription, as `POST /v1/feeds` carries it, checked:
/// `{"feed": "https://…", "options": {…}, "refresh": {"minSeconds": 60, "maxSeconds": 3600}}`.
struct FeedRequest: Sendable {
    var feed: String
    var options: [String: OptionValue]
    var minSeconds: Int
    var maxSeconds: Int

    static let defaultSeconds = (min: 60, max: 3600)
    /// The longest a subscription may go between two fetches: a week.
    static let longestSeconds = 604_800

    /// Reads and checks a request body.
    /// - Throws: ``ServiceProblem``: `invalid-json`, `invalid-request` or `invalid-options`, naming the field.
    init(body: [UInt8]) throws(ServiceProblem) {
        let object: [String: Any]
        do {
            guard let parsed = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
                throw ServiceProblem.invalidRequest("the body must be a JSON object")
            }
            object = parsed
        } catch let problem as ServiceProblem {
            throw problem
        } catch {
            throw ServiceProblem(
                .badRequest, "invalid-json", "The body is not JSON",
                detail: "the request body must be a JSON object: \(error.localizedDescription)")
        }
        for key in object.keys.sorted() where !["feed", "options", "refresh"].contains(key) {
            throw .invalidRequest(
                "unknown field \"\(key)\"; a subscription has feed, options and refresh", field: key)
        }
        guard let feed = object["feed"] as? String else {
            throw .invalidRequest("give the feed's http(s) URL: {\"feed\": \"https://…\"}", field: "feed")
        }
        // As for a posted feed URL: the scheme is checked here, the rest by each fetch (its failure shows in the
        // subscription's state).
        guard RemoteFetcher.isRemote(feed) else {
            throw .invalidRequest(
                "feed must be an http(s) URL; a subscription fetches its feed again and again", field: "feed")
        }
        guard feed.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw .invalidRequest(
                "feed must be a URL of printable ASCII characters (percent-encode the others)", field: "feed")
        }
        self.feed = feed
        var named: [String: OptionValue] = [:]
        switch object["options"] {
        case nil: break
        case let options as [String: Any]:
            for (name, value) in options {
                do {
                    let data = try JSONSerialization.data(withJSONObject: [value], options: [.fragmentsAllowed])
                    named[name] = try JSONDecoder().decode([OptionValue].self, from: data)[0]
                } catch {
                    throw .invalidOptions(
                        "options.\(name) must be a number, a string, true/false or a list of strings",
                        field: "options.\(name)")
                }
            }
        default:
            throw .invalidRequest("options must be an object of layout options", field: "options")
        }
        options = try ClientOptions.checked(named)
        var minSeconds = Self.defaultSeconds.min
        var maxSeconds = Self.defaultSeconds.max
        switch object["refresh"] {
        case nil: break
        case let refresh as [String: Any]:
            for key in refresh.keys.sorted() where !["minSeconds", "maxSeconds"].contains(key) {
                throw .invalidRequest(
                    "unknown field \"refresh.\(key)\"; refresh has minSeconds and maxSeconds", field: "refresh.\(key)")
            }
            minSeconds = try Self.seconds(refresh["minSeconds"], "minSeconds") ?? minSeconds
            maxSeconds = try Self.seconds(refresh["maxSeconds"], "maxSeconds") ?? max(maxSeconds, minSeconds)
            guard minSeconds <= maxSeconds else {
                throw .invalidRequest(
                    "refresh.minSeconds (\(minSeconds)) is more than refresh.maxSeconds (\(maxSeconds))",
                    field: "refresh.minSeconds")
            }
        default:
            throw .invalidRequest("refresh must be an object: {\"minSeconds\": 60, \"maxSeconds\": 3600}", field: "refresh")
        }
        self.minSeconds = minSeconds
        self.maxSeconds = maxSeconds
    }

    private static func seconds(_ value: Any?, _ name: String) throws(ServiceProblem) -> Int? {
        guard let value else { return nil }
        let number = (try? JSONSerialization.data(withJSONObject: [value], options: [.fragmentsAllowed]))
            .flatMap { try? JSONDecoder().decode([Double].self, from: $0) }?.first
        guard let number, number.rounded() == number, (1...Double(longestSeconds)).contains(number) else {
            throw .invalidRequest(
                "refresh.\(name) is a whole number of seconds from 1 to \(longestSeconds)", field: "refresh.\(name)")
        }
        return Int(number)
    }
}
