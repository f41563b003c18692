import Testing
import TextMeasure
import WaterfallLayout

@testable import LayoutPages

/// The options' fingerprint, which every cursor carries, comes from an explicit, versioned encoding of the options.
@Suite struct OptionsFingerprintTests {
    /// Options with every optional value present, so that every stored property shows in a reflection.
    static var everythingSet: LayoutOptions {
        var options = LayoutOptions()
        options.waterfall.maximumPhotoHeight = 500
        options.waterfall.containerHeight = 900
        options.waterfall.maximumPhotoWidth = 400
        options.imageRoot = "/srv/photos"
        options.maximumPages = 3
        options.probeCachePath = "/tmp/cache.sqlite"
        options.flow = FlowSettings(photoHeight: 120, alignment: .justified, follow: true)
        options.annotation.title.fontDirectory = "/fonts"
        options.pagination.pageHeight = 2000
        return options
    }

    /// Every stored property's path (`waterfall.insets.top`), walking structs and unwrapping optionals.
    static func storedPaths(of value: Any, prefix: String = "") -> [String] {
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            return mirror.children.first.map { storedPaths(of: $0.value, prefix: prefix) } ?? [prefix]
        }
        guard mirror.displayStyle == .struct, !mirror.children.isEmpty else { return [prefix] }
        return mirror.children.flatMap { child in
            storedPaths(of: child.value, prefix: prefix.isEmpty ? child.label! : prefix + "." + child.label!)
        }
    }

    /// Adding an option to `LayoutOptions` (or to a struct inside it) fails this test until the option is either
    /// encoded into the fingerprint or listed among the options that leave pages alone, on purpose.
    @Test func everyStoredOptionIsEncodedOrExcludedOnPurpose() {
        let options = Self.everythingSet
        let encoded = Set(
            options.fingerprintEncoding.split(separator: "\n").dropFirst().map { String($0.prefix { $0 != "=" }) })
        let paths = Self.storedPaths(of: options)
        // The walk reaches into the nested structs (else the loop below would check nothing).
        #expect(paths.contains("waterfall.containerWidth") && paths.contains("annotation.title.size"), "\(paths)")
        for path in paths {
            let covered = (encoded.union(LayoutOptions.fingerprintExclusions)).contains { name in
                path == name || path.hasPrefix(name + ".")
            }
            #expect(covered, "\(path) is neither in the fingerprint encoding nor in fingerprintExclusions")
        }
    }

    @Test func theEncodingIsVersionedAndWrittenOutExplicitly() {
        let encoding = LayoutOptions().fingerprintEncoding
        #expect(encoding.hasPrefix("feedlayout.options/1\n"))
        #expect(encoding.contains("waterfall.containerWidth=1024.0\n"))
        #expect(encoding.contains("waterfall.columns=adaptive:236.0:2:-\n"))
        #expect(encoding.contains("waterfall.insets=16.0,16.0,16.0,16.0\n"))
        #expect(encoding.contains("annotation.title.lineHeight=normal\n"))
        #expect(encoding.contains("flow=-\n"))
        // Nothing printed by Swift's reflection of a type (`Insets(top: …)`, `Optional(…)`).
        #expect(!encoding.contains("("))
    }

    @Test func everyOptionThatShapesPagesChangesTheFingerprint() {
        let base = LayoutOptions()
        var changes: [(String, (inout LayoutOptions) -> Void)] = [
            ("width", { $0.waterfall.containerWidth = 1023 }),
            ("columns", { $0.waterfall.columns = .fixed(4) }),
            ("inset", { $0.waterfall.insets.left = 15 }),
            ("gutter", { $0.waterfall.columnGap = 15 }),
            ("row gap", { $0.waterfall.rowGap = 15 }),
            ("padding", { $0.waterfall.cellPadding = 1 }),
            ("scale", { $0.waterfall.scale = 2 }),
            ("placement", { $0.waterfall.placement = .gridLanes }),
            ("title size", { $0.annotation.title.size = 16 }),
            ("caption weight", { $0.annotation.text.weight = 500 }),
            ("line height", { $0.annotation.text.lineHeight = .pixels(18) }),
            ("title lines", { $0.annotation.titleLines = 3 }),
            ("page size", { $0.pagination.pageSize = 49 }),
            ("placeholders", { $0.placeholders = true }),
            ("private network", { $0.allowPrivateNetwork = true }),
            ("flow", { $0.flow = FlowSettings() }),
            ("section header", { $0.sections.headerHeight = 10 }),
        ]
        changes.append(("fallback ratio", { $0.fallbackAspectRatio = 1.5 }))
        var seen: Set<UInt64> = [base.fingerprint]
        for (name, change) in changes {
            var options = base
            change(&options)
            #expect(seen.insert(options.fingerprint).inserted, "changing the \(name) left the fingerprint as it was")
        }
        // What leaves pages alone leaves the fingerprint alone.
        var same = base
        same.maximumPages = 1
        same.probeConcurrency = 2
        same.probeCachePath = "/elsewhere"
        #expect(same.fingerprint == base.fingerprint)
    }
}
