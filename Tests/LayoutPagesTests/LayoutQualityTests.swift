import Testing
import WaterfallLayout

@testable import LayoutPages

@Suite struct LayoutQualityTests {
    @Test func inversionCountMatchesABruteForceCount() {
        var state: UInt64 = 42
        for length in 0..<60 {
            var permutation = Array(0..<length)
            for index in permutation.indices.reversed() {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                permutation.swapAt(index, Int(state >> 33) % (index + 1))
            }
            var expected = 0
            for i in permutation.indices { for j in permutation.indices where i < j && permutation[i] > permutation[j] { expected += 1 } }
            #expect(LayoutQuality.inversions(permutation) == expected, "\(permutation)")
        }
    }

    func item(_ index: Int, column: Int, x: Int, y: Int) -> PlacedItem {
        let frame = DeviceRect(x: x, y: y, width: 100, height: 50)
        return PlacedItem(
            index: index, column: column, columnSpan: 1, frame: frame, photoSlot: frame, photoFrame: frame,
            annotationFrame: frame)
    }

    @Test func measuresImbalanceWhitespaceAndOrder() throws {
        let grid = try WaterfallGrid(WaterfallConfiguration(containerWidth: 300, columns: .fixed(3)))
        // Feed order 0, 1, 2; item 2 starts above item 1, so a reader meets 0, 2, 1.
        let items = [item(0, column: 0, x: 0, y: 0), item(1, column: 1, x: 100, y: 30), item(2, column: 2, x: 200, y: 10)]
        let quality = LayoutQuality(items: items, columnHeights: [50, 80, 60], grid: grid)
        #expect(quality.columnImbalance == 30)
        #expect(quality.whitespaceArea == (30 + 0 + 20) * 100)
        #expect(quality.orderInversions == 1)
        #expect(quality.largestDisplacement == 1)
    }

    @Test func rightToLeftReadsFromTheRight() throws {
        let grid = try WaterfallGrid(
            WaterfallConfiguration(containerWidth: 200, columns: .fixed(2), direction: .rightToLeft))
        // Both at the same height: the right one (item 0) is read first, so the order is kept.
        let items = [item(0, column: 0, x: 100, y: 0), item(1, column: 1, x: 0, y: 0)]
        #expect(LayoutQuality(items: items, columnHeights: [50, 50], grid: grid).orderInversions == 0)
        let reversed = [item(0, column: 1, x: 0, y: 0), item(1, column: 0, x: 100, y: 0)]
        #expect(LayoutQuality(items: reversed, columnHeights: [50, 50], grid: grid).orderInversions == 1)
    }
}
