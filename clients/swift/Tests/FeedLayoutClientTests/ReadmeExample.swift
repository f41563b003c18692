import Foundation
import FeedLayoutClient

/// The pins on the first screen of a phone 390 points wide, and where to rest after a fling.
func firstScreen(service: URL, layoutID: String) async throws -> [Item] {
    let loader = try await LayoutLoader(service: service, layoutID: layoutID, width: 390)  // picks the breakpoint
    let screen = Rect(x: 0, y: 0, width: 390, height: 844)
    try await loader.load(toCover: screen)  // page 0, and more until two screens below are in
    let pins = await loader.items(in: screen)  // what GET /v1/layouts/{id}/items answers, computed here
    for pin in pins { print(pin.index, pin.frame, pin.annotation.title?.text ?? "") }
    print(await loader.snap(1200, direction: .forward) as Any)  // what GET …/snap answers
    return pins
}
