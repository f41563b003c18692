import ArgumentParser
import FeedLayout
import Foundation
import HTTPTypes
import LayoutCommandLine
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
    /// The layout options as `feedlayout layout` arguments (`--width=375`, …), in the request's key order.
    var arguments: [String]

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
                detail: "the request body must be a JSON object: \(Self.reason(context.underlyingError) ?? context.debugDescription)")
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
                throw .invalidRequest("baseURL goes with feedText; a fetched feed's base is its own URL", field: "baseURL")
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
        arguments = try ClientOptions.arguments(decoded.options ?? [])
    }

    /// The request's JSON: three known fields and the options object, any other field refused.
    private struct Body: Decodable {
        var feed: String?
        var feedText: String?
        var baseURL: String?
        var options: [(String, OptionValue)]?

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
                    "unknown field \(key.stringValue); a request has feed or feedText, baseURL and options",
                    field: key.stringValue)
            }
            feed = try container.decodeIfPresent(String.self, forKey: Key(stringValue: "feed"))
            feedText = try container.decodeIfPresent(String.self, forKey: Key(stringValue: "feedText"))
            baseURL = try container.decodeIfPresent(String.self, forKey: Key(stringValue: "baseURL"))
            let optionsKey = Key(stringValue: "options")
            if container.contains(optionsKey), try !container.decodeNil(forKey: optionsKey) {
                let options = try container.nestedContainer(keyedBy: Key.self, forKey: optionsKey)
                // Sorted, so the same options in another key order give the same arguments.
                self.options = try options.allKeys.sorted { $0.stringValue < $1.stringValue }.map { key in
                    (key.stringValue, try options.decode(OptionValue.self, forKey: key))
                }
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
            return .invalidRequest("the body must be a JSON object, not \(type == [String: Any].self ? "another JSON value" : "\(type)")")
        case .typeMismatch(let type, let context):
            let field = path(context)
            let wanted = type == String.self ? "a string" : "\(type)"
            if field.hasPrefix("options.") {
                return .invalidOptions("\(field) must be a number, a string, true/false or a list of strings", field: field)
            }
            return .invalidRequest("\(field) must be \(wanted)", field: field)
        case .valueNotFound(_, let context), .keyNotFound(_, let context), .dataCorrupted(let context):
            let field = path(context)
            return .invalidRequest(
                "\(field.isEmpty ? "the body" : field): \(context.debugDescription)", field: field.isEmpty ? nil : field)
        @unknown default:
            return .invalidRequest("\(error)")
        }
    }
}

/// An option's value as JSON gives it.
enum OptionValue: Decodable, Sendable {
    case bool(Bool)
    case number(Double)
    case string(String)
    case strings([String])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else {
            self = .strings(try container.decode([String].self))
        }
    }
}

/// The layout options a client may set: `feedlayout layout`'s long options in camelCase, read by the command's
/// own parser (`LayoutCommandOptions`), so the service accepts exactly what the command accepts, with the same
/// bounds and messages.
enum ClientOptions {
    /// Options that take a value.
    static let valued: Set<String> = [
        "width", "columns", "minColumnWidth", "minColumns", "maxColumns", "gutter", "rowGap", "inset", "cellPadding",
        "annotationSpacing", "maxPhotoHeight", "minPhotoHeight", "scale", "placement", "orderTolerance",
        "fallbackAspectRatio", "breakpoints", "mode", "rowPhotoHeight", "align", "axis", "height", "maxPhotoWidth",
        "minPhotoWidth", "sectionHeaderHeight", "sectionFooterHeight", "sectionInset", "decorationOutset", "font",
        "titleFont", "fontSize", "titleFontSize", "titleWeight", "lineHeight", "titleLines", "textLines",
        "titleTextGap", "pageSize", "pageHeight",
    ]
    /// Options that are on or off.
    static let flags: Set<String> = ["rightToLeft", "follow", "noFallbackFonts", "placeholders"]
    /// Options that take a list.
    static let lists: Set<String> = ["fallbackFont"]
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

    /// Every option a client may set, for messages.
    static var allNames: [String] { (valued.union(flags).union(lists)).sorted() }

    /// The command-line arguments for a request's options.
    /// - Throws: ``ServiceProblem`` `invalid-options` naming the option.
    static func arguments(_ options: [(String, OptionValue)]) throws(ServiceProblem) -> [String] {
        var arguments: [String] = []
        for (name, value) in options {
            let flag = "--" + kebabCase(name)
            if let why = serviceOwned[name] {
                throw .invalidOptions("\(name) cannot be set by a request: \(why)", field: "options.\(name)")
            }
            if flags.contains(name) {
                guard case .bool(let on) = value else {
                    throw .invalidOptions("\(name) is true or false", field: "options.\(name)")
                }
                if on { arguments.append(flag) }
            } else if valued.contains(name) {
                let text: String
                switch value {
                case .number(let number): text = numberText(number)
                case .string(let string): text = string
                case .bool, .strings:
                    throw .invalidOptions("\(name) takes a number or a string", field: "options.\(name)")
                }
                if name == "font" || name == "titleFont", TextStyle.isFontFilePath(text) {
                    throw .invalidOptions(
                        "\(name) must be a font family name installed on the service; a client never names font files",
                        field: "options.\(name)")
                }
                arguments.append(flag + "=" + text)
            } else if lists.contains(name) {
                let values: [String]
                switch value {
                case .strings(let strings): values = strings
                case .string(let string): values = [string]
                case .bool, .number:
                    throw .invalidOptions("\(name) takes a list of font family names", field: "options.\(name)")
                }
                for family in values {
                    if TextStyle.isFontFilePath(family) {
                        throw .invalidOptions(
                            "\(name) must list font family names installed on the service; a client never names font files",
                            field: "options.\(name)")
                    }
                    arguments.append(flag + "=" + family)
                }
            } else {
                throw .invalidOptions(
                    "unknown option \(name); the options are \(allNames.joined(separator: ", "))",
                    field: "options.\(name)")
            }
        }
        return arguments
    }

    /// The library's options for stored arguments, with what the service decides for every layout.
    /// - Throws: ``ServiceProblem`` `invalid-options`, naming the option when the message does.
    /// The options of a request's arguments, with what only the service decides: its address policy and image root.
    static func layoutOptions(_ arguments: [String], settings: ServiceSettings) throws(ServiceProblem) -> LayoutOptions {
        do {
            // No probe cache path: the service's shared resources hold the cache.
            var options = try LayoutCommandOptions.parse(arguments + ["--no-cache"]).options()
            options.allowPrivateNetwork = settings.allowPrivateNetwork
            options.imageRoot = settings.imageRoot
            options.maximumPages = nil
            try options.validate()
            return options
        } catch let error as LayoutError {
            throw .invalidOptions(error.message, field: error.option.map { "options." + camelCase($0) })
        } catch {
            let message = LayoutCommandOptions.message(for: error)
            // The parser names the option as the command does (`--row-gap`): name the request's field instead.
            let field = arguments.lazy.compactMap { argument -> String? in
                let option = String(argument.prefix { $0 != "=" })
                return message.contains(option + " ") || message.contains(option + "'") || message.contains(option + ":")
                    || message.hasSuffix(option) ? "options." + camelCase(String(option.dropFirst(2))) : nil
            }.first
            throw .invalidOptions(message, field: field)
        }
    }

    /// `rowGap` → `row-gap`.
    static func kebabCase(_ name: String) -> String {
        var result = ""
        for character in name {
            if character.isUppercase {
                result += "-" + character.lowercased()
            } else {
                result.append(character)
            }
        }
        return result
    }

    /// `row-gap` → `rowGap`.
    static func camelCase(_ name: String) -> String {
        let parts = name.split(separator: "-")
        guard let first = parts.first else { return name }
        return String(first) + parts.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }

    /// A JSON number as the command line would spell it: integers without a fraction (an `Int` option refuses
    /// `2.0`), others exactly.
    static func numberText(_ value: Double) -> String {
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        return "\(value)"
    }
}
