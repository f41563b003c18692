import Foundation
import Testing

/// Headless Chromium (Debian's chromium package; `scripts/install-deps --test` installs it) running a page whose
/// script leaves its findings as JSON in a `<pre id="check">`, which `--dump-dom` prints.
enum HeadlessChromium {
    /// Writes `html` to `check.html` in the folder, opens it, and returns the JSON the page's script wrote.
    ///
    /// - Parameter flags: Chromium flags beside the headless basics (`--no-sandbox`, `--disable-gpu`,
    ///   `--force-device-scale-factor=1`, `--dump-dom`).
    /// - Returns: The JSON text, or `nil` (with a recorded issue) when Chromium printed none.
    static func checkResult(of html: String, in directory: URL, flags: [String]) async throws -> String? {
        let page = directory.appendingPathComponent("check.html")
        try html.write(to: page, atomically: true, encoding: .utf8)
        let chromium = try await CommandRunner.runTool(
            "/usr/bin/chromium",
            ["--headless", "--no-sandbox", "--disable-gpu", "--force-device-scale-factor=1"] + flags
                + ["--dump-dom", page.absoluteString])
        let dom = String(decoding: chromium.stdout, as: UTF8.self)
        guard let start = dom.range(of: "<pre id=\"check\">"),
            let end = dom.range(of: "</pre>", range: start.upperBound..<dom.endIndex)
        else {
            Issue.record("chromium printed no check result (is Debian's chromium installed?): \(chromium.stderr.suffix(600))")
            return nil
        }
        return String(dom[start.upperBound..<end.lowerBound])
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&lt;", with: "<")
            .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
    }
}
