import Foundation

/// A page's own counts as the stores keep them beside it (the layout's counts are their sum, plus the feed's
/// warnings): what ``LayoutStore/adoptPages(from:pageCount:into:)`` adds to the layout that adopts the page.
enum PageCounts {
    /// Warnings by code as a JSON object with sorted keys (`{}` for none, most pages).
    static func json(_ warnings: [String: Int]) -> String {
        guard !warnings.isEmpty else { return "{}" }
        var text = "{"
        for (position, code) in warnings.keys.sorted().enumerated() {
            if position > 0 { text += "," }
            text += JSONString.quoted(code) + ":" + String(warnings[code]!)
        }
        return text + "}"
    }

    /// The sum of pages' warnings, each as ``json(_:)`` wrote it.
    static func sum(_ pages: [String]) throws -> [String: Int] {
        var total: [String: Int] = [:]
        for page in pages where page != "{}" {
            for (code, count) in try JSONDecoder().decode([String: Int].self, from: Data(page.utf8)) {
                total[code, default: 0] += count
            }
        }
        return total
    }
}

/// JSON string literals, for the few the stores write themselves.
private enum JSONString {
    static func quoted(_ text: String) -> String {
        var quoted = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case _ where scalar.value < 0x20: quoted += String(format: "\\u%04x", scalar.value)
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted + "\""
    }
}
