import FeedLayout
import Foundation
import HTTPTypes
import RemoteFetch
import TextMeasure

/// A client's request for a layout, as `POST /v1/layouts` carries it, checked.
struct LayoutRequest: Sendable {
    enum Feed: Sendable, Equatable {
        /// An http(s) URL the service fetches.
        case url(String)
        /// The feed's text, and the http(s) URL its relative references resolve against.
        case text(String, baseURL: String?)
    }

    var feed: Feed
    /// The layout options the request names, checked for what a client may set (``ClientOptions/checked(_:)``).
    var options: [String: OptionValue]

    /// Reads and checks a request body.
    /// - Throws: ``ServiceProblem``: `invalid-json`, `invalid-request` or `invalid-options`, naming the field.
    init(body: [UInt8]) throws(ServiceProblem) {
        let decoded: Body
        do {
            decoded = try JSONDecoder().decode(Body.self, from: Data(body))
        } catch let problem as ServiceProblem {
            throw problem
        } catch let DecodingError.dataCorrupted(context) where context.codingPath.isEmpty {
            throw ServiceProblem(
                .badRequest, "invalid-json", "The body is not JSON",
                detail:
                    "the request body must be a JSON object: \(Self.reason(context.underlyingError) ?? context.debugDescription)"
            )
        } catch let error as DecodingError {
            throw Self.problem(for: error)
        } catch {
            throw ServiceProblem(.badRequest, "invalid-json", "The body is not JSON", detail: "\(error)")
        }
        switch (decoded.feed, decoded.feedText) {
        case (let url?, nil):
            guard RemoteFetcher.isRemote(url) else {
                throw .invalidRequest(
                    "feed must be an http(s) URL; local paths and file: URLs are never read for a client "
                        + "(send the feed's text as feedText instead)", field: "feed")
            }
            guard decoded.baseURL == nil else {
                throw .invalidRequest(
                    "baseURL goes with feedText; a fetched feed's base is its own URL", field: "baseURL")
            }
            feed = .url(url)
        case (nil, let text?):
            if let base = decoded.baseURL, !RemoteFetcher.isRemote(base) {
                throw .invalidRequest("baseURL must be an http(s) URL", field: "baseURL")
            }
            feed = .text(text, baseURL: decoded.baseURL)
        case (nil, nil):
            throw .invalidRequest("give the feed: feed (an http(s) URL) or feedText (the feed itself)", field: "feed")
        case (.some, .some):
            throw .invalidRequest("give feed or feedText, not both", field: "feedText")
        }
        options = try ClientOptions.checked(decoded.options ?? [:])
    }

    /// The request's JSON: three known fields and the options object, any other field refused.
    private struct Body: Decodable {
        var feed: String?
        var feedText: String?
        var baseURL: String?
        var options: [String: OptionValue]?

        private struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            for key in container.allKeys where !["feed", "feedText", "baseURL", "options"].contains(key.stringValue) {
                throw ServiceProblem.invalidRequest(
                    "unknown field \"\(key.stringValue)\"; a request has feed or feedText, baseURL and options",
                    field: key.stringValue)
            }
            feed = try container.decodeIfPresent(String.self, forKey: Key(stringValue: "feed"))
            feedText = try container.decodeIfPresent(String.self, forKey: Key(stringValue: "feedText"))
            baseURL = try container.decodeIfPresent(String.self, forKey: Key(stringValue: "baseURL"))
            let optionsKey = Key(stringValue: "options")
            if container.contains(optionsKey), try !container.decodeNil(forKey: optionsKey) {
                let options = try container.nestedContainer(keyedBy: Key.self, forKey: optionsKey)
                var named: [String: OptionValue] = [:]
                for key in options.allKeys {
                    named[key.stringValue] = try options.decode(OptionValue.self, forKey: key)
                }
                self.options = named
            }
        }
    }

    private static func reason(_ error: (any Error)?) -> String? {
        guard let error else { return nil }
        return "\(error)"
    }

    private static func problem(for error: DecodingError) -> ServiceProblem {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map(\.stringValue).joined(separator: ".")
        }
        switch error {
        case .typeMismatch(let type, let context) where context.codingPath.isEmpty:
            return .invalidRequest(
                "the body must be a JSON object, not \(type == [String: Any].self ? "another JSON value" : "\(type)")")
        case .typeMismatch(let type, let context):
            let field = path(context)
            let wanted = type == String.self ? "a string" : "\(type)"
            if field.hasPrefix("options.") {
                return .invalidOptions(
                    "\(field) must be a number, a string, true/false or a list of strings", field: field)
            }
            return .invalidRequest("\(field) must be \(wanted)", field: field)
        case .valueNotFound(_, let context), .keyNotFound(_, let context), .dataCorrupted(let context):
            let field = path(context)
            return .invalidRequest(
                "\(field.isEmpty ? "the body" : field): \(context.debugDescription)", field: field.isEmpty ? nil : field
            )
        @unknown default:
            return .invalidRequest("\(error)")
        }
    }
}

/// The layout options a client may set: the library's named options (`LayoutOptionValues`, `feedlayout layout`'s long
/// options in camelCase), read with the command's bounds and messages, less those the service decides.
enum ClientOptions {
    /// Options of the command that the service sets, with why a client may not.
    static let serviceOwned: [String: String] = [
        "resume": "a client fetches the next page with GET /v1/pages?cursor=…",
        "maxPages": "the service lays out every page once and keeps them",
        "imageRoot": "a client never names local files",
        "fontDir": "a client never names local files",
        "cache": "the service keeps one probe cache in its store",
        "noCache": "the service keeps one probe cache in its store",
        "allowPrivateNetwork": "the service's own --allow-private-network decides",
        "probeConcurrency": "the service decides how much work runs at once",
        "pretty": "pages are served exactly as feedlayout layout writes them",
    ]

    /// A request's options, checked for what only the service forbids: no option the service owns, no font named by
    /// its file. Names, kinds of value and bounds are the library's to check, when the options are made
    /// (``layoutOptions(_:settings:)``, which a request's handling calls next).
    /// - Throws: ``ServiceProblem`` `invalid-options` naming the option.
    static func checked(_ options: [String: OptionValue]) throws(ServiceProblem) -> [String: OptionValue] {
        for name in options.keys.sorted() {
            if let why = serviceOwned[name] {
                throw .invalidOptions("\(name) cannot be set by a request: \(why)", field: "options.\(name)")
            }
            let fonts: [String] =
                switch (name, options[name]!) {
                case ("font", .string(let font)), ("titleFont", .string(let font)): [font]
                case ("fallbackFont", .string(let font)): [font]
                case ("fallbackFont", .strings(let fonts)): fonts
                default: []
                }
            if fonts.contains(where: TextStyle.isFontFilePath) {
                let what = name == "fallbackFont" ? "list font family names" : "be a font family name"
                throw .invalidOptions(
                    "\(name) must \(what) installed on the service; a client never names font files",
                    field: "options.\(name)")
            }
        }
        return options
    }

    /// The library's options for named options (a request's, or a layout's as stored), with what only the service
    /// decides: its address policy and image root, no page limit, and the probe cache of its store.
    /// - Throws: ``ServiceProblem`` `invalid-options`, naming the option.
    static func layoutOptions(_ named: [String: OptionValue], settings: ServiceSettings) throws(ServiceProblem)
        -> LayoutOptions
    {
        do {
            var options = try LayoutOptionValues(named: named).options()
            options.allowPrivateNetwork = settings.allowPrivateNetwork
            options.imageRoot = settings.imageRoot
            options.maximumPages = nil
            options.probeCachePath = nil
            try options.validate()
            return options
        } catch {
            throw problem(error)
        }
    }

    /// The options a store kept for a layout (``layoutOptions(_:settings:)`` of its stored JSON).
    static func layoutOptions(stored: String, settings: ServiceSettings) throws(ServiceProblem) -> LayoutOptions {
        let named: [String: OptionValue]
        do {
            named = try LayoutOptionValues.named(storedJSON: stored)
        } catch {
            throw problem(error)
        }
        return try layoutOptions(named, settings: settings)
    }

    /// A library error as the client's problem, naming the request's field (`options.rowGap`).
    private static func problem(_ error: LayoutError) -> ServiceProblem {
        .invalidOptions(error.message, field: error.option.map { "options." + LayoutOptionValues.jsonName($0) })
    }
}
