/// Resamples rows, as they are decoded, to a target size for drawing: premultiplied RGBA, EXIF orientation
/// applied, without ever holding the full image.
///
/// Each axis is resampled on its own: shrinking averages the source area an output pixel covers (partial pixels
/// weighted by how much of them it covers), growing is bilinear between the two nearest source centres. The work
/// happens in the stored orientation (rows arrive that way) towards the target turned back, and the small result
/// is turned upright at the end. The weights are those of the display axes, so for orientation 1 and 2 every sum
/// is formed in the same order as resampling the upright image would, bit for bit; for the other orientations
/// the same terms are added in another order, which moves a channel by at most one level where a value sits on a
/// rounding edge.
struct AreaResampler: DecodedRowConsumer {
    /// The image as stored, and the target as displayed.
    let storedWidth: Int
    let storedHeight: Int
    let orientation: Int
    /// The target in the stored orientation.
    private let storedTargetWidth: Int
    private let storedTargetHeight: Int
    /// Per stored target column: its source columns and weights, in the display axis's order.
    private var columnStart: [Int] = []
    private var columnSources: [Int] = []
    private var columnWeights: [Float] = []
    /// Per stored source row: the stored target rows it adds to, and with which weight.
    private var rowStart: [Int] = []
    private var rowTargets: [Int] = []
    private var rowWeights: [Float] = []
    /// One source row resampled across, and the premultiplied sums of every target pixel.
    private var across: [Float] = []
    private var sums: [Float] = []

    /// Plans the resampling of a stored `storedWidth` × `storedHeight` image shown with EXIF `orientation` at
    /// `targetWidth` × `targetHeight` (each at least 1).
    init(storedWidth: Int, storedHeight: Int, orientation: Int, targetWidth: Int, targetHeight: Int) {
        self.storedWidth = storedWidth
        self.storedHeight = storedHeight
        self.orientation = (2...8).contains(orientation) ? orientation : 1
        let swaps = self.orientation >= 5
        storedTargetWidth = swaps ? targetHeight : targetWidth
        storedTargetHeight = swaps ? targetWidth : targetHeight
    }

    /// Bytes the resampling holds: the weight tables (a few entries per source column and row) and the target.
    static func bufferBytes(storedWidth: Int, storedHeight: Int, targetWidth: Int, targetHeight: Int) -> Int {
        let tableEntries = 2 * (storedWidth + storedHeight + 2 * (targetWidth + targetHeight))
        return tableEntries * 16 + (targetWidth + targetWidth * targetHeight + targetHeight) * 4 * 4
    }

    /// Builds the tables and the target; called once the memory is reserved.
    mutating func allocate() {
        // Which stored axes run against their display axes (from RGBAImage.applying(orientation:)).
        let mirrorsColumns = [2, 3, 7, 8].contains(orientation)
        let mirrorsRows = [3, 4, 6, 7].contains(orientation)
        let columns = Self.weights(from: storedWidth, to: storedTargetWidth)
        var start = [Int](repeating: 0, count: storedTargetWidth + 1)
        var sourcesByTarget = [[Int]](repeating: [], count: storedTargetWidth)
        var weightsByTarget = [[Float]](repeating: [], count: storedTargetWidth)
        for (displayIndex, column) in columns.enumerated() {
            let target = mirrorsColumns ? storedTargetWidth - 1 - displayIndex : displayIndex
            for (offset, weight) in column.weights.enumerated() {
                let source = column.first + offset
                sourcesByTarget[target].append(mirrorsColumns ? storedWidth - 1 - source : source)
                weightsByTarget[target].append(weight)
            }
        }
        for target in 0..<storedTargetWidth { start[target + 1] = start[target] + sourcesByTarget[target].count }
        (columnStart, columnSources, columnWeights) = (start, sourcesByTarget.flatMap { $0 }, weightsByTarget.flatMap { $0 })

        var targetsBySource = [[Int]](repeating: [], count: storedHeight)
        var rowWeightsBySource = [[Float]](repeating: [], count: storedHeight)
        for (displayIndex, row) in Self.weights(from: storedHeight, to: storedTargetHeight).enumerated() {
            let target = mirrorsRows ? storedTargetHeight - 1 - displayIndex : displayIndex
            for (offset, weight) in row.weights.enumerated() {
                let source = row.first + offset
                let storedSource = mirrorsRows ? storedHeight - 1 - source : source
                targetsBySource[storedSource].append(target)
                rowWeightsBySource[storedSource].append(weight)
            }
        }
        rowStart = [Int](repeating: 0, count: storedHeight + 1)
        for source in 0..<storedHeight { rowStart[source + 1] = rowStart[source] + targetsBySource[source].count }
        (rowTargets, rowWeights) = (targetsBySource.flatMap { $0 }, rowWeightsBySource.flatMap { $0 })
        across = [Float](repeating: 0, count: storedTargetWidth * 4)
        sums = [Float](repeating: 0, count: storedTargetWidth * storedTargetHeight * 4)
    }

    mutating func consume(_ row: DecodedRow) {
        guard rowStart[row.y] < rowStart[row.y + 1] else { return }
        let isWhole = row.firstX == 0 && row.xStep == 1
        let targets = storedTargetWidth
        columnStart.withUnsafeBufferPointer { columnStart in
            columnSources.withUnsafeBufferPointer { columnSources in
                columnWeights.withUnsafeBufferPointer { columnWeights in
                    across.withUnsafeMutableBufferPointer { across in
                        for target in 0..<targets {
                            var sum: (Float, Float, Float, Float) = (0, 0, 0, 0)
                            for entry in columnStart[target]..<columnStart[target + 1] {
                                let source = columnSources[entry]
                                let index: Int
                                if isWhole {
                                    index = source
                                } else {
                                    // An Adam7 pass holds every xStep-th pixel from firstX; the rest come in others.
                                    let offset = source - row.firstX
                                    guard offset >= 0, offset % row.xStep == 0 else { continue }
                                    index = offset / row.xStep
                                }
                                let pixel = row.pixels + index * 4
                                let alpha = Float(pixel[3])
                                let factor = alpha / 255
                                let weight = columnWeights[entry]
                                sum.0 += Float(pixel[0]) * factor * weight
                                sum.1 += Float(pixel[1]) * factor * weight
                                sum.2 += Float(pixel[2]) * factor * weight
                                sum.3 += alpha * weight
                            }
                            (across[target * 4], across[target * 4 + 1], across[target * 4 + 2], across[target * 4 + 3]) =
                                sum
                        }
                    }
                }
            }
        }
        for entry in rowStart[row.y]..<rowStart[row.y + 1] {
            let base = rowTargets[entry] * storedTargetWidth * 4
            let weight = rowWeights[entry]
            across.withUnsafeBufferPointer { across in
                sums.withUnsafeMutableBufferPointer { sums in
                    for index in 0..<storedTargetWidth * 4 { sums[base + index] += across[index] * weight }
                }
            }
        }
    }

    /// The target: 8-bit premultiplied RGBA, upright, at the display size the resampler was made for.
    func image() -> [UInt8] {
        var output = [UInt8](repeating: 0, count: sums.count)
        for index in stride(from: 0, to: sums.count, by: 4) {
            // Weights are non-negative, so adding a half and truncating rounds; premultiplied colour never exceeds
            // its alpha.
            let alpha = min(255, sums[index + 3] + 0.5)
            output[index] = UInt8(min(alpha, sums[index] + 0.5))
            output[index + 1] = UInt8(min(alpha, sums[index + 1] + 0.5))
            output[index + 2] = UInt8(min(alpha, sums[index + 2] + 0.5))
            output[index + 3] = UInt8(alpha)
        }
        return RGBAImage(width: storedTargetWidth, height: storedTargetHeight, pixels: output)
            .applying(orientation: orientation).pixels
    }

    /// For each output index along one axis: the first source index and the weights from there.
    private static func weights(from source: Int, to target: Int) -> [(first: Int, weights: [Float])] {
        let ratio = Double(source) / Double(target)
        return (0..<target).map { index in
            if ratio >= 1 {
                // Shrinking: each output pixel averages the source area it covers.
                let start = Double(index) * ratio
                let end = min(Double(source), start + ratio)
                let first = Int(start.rounded(.down))
                let last = min(source - 1, Int((end - 1e-9).rounded(.down)))
                var weights: [Float] = []
                for sourceIndex in first...max(first, last) {
                    let overlap = min(end, Double(sourceIndex + 1)) - max(start, Double(sourceIndex))
                    weights.append(Float(max(0, overlap) / ratio))
                }
                return (first, weights)
            }
            // Growing: bilinear between the two nearest source centres.
            let centre = (Double(index) + 0.5) * ratio - 0.5
            let lower = Int(centre.rounded(.down))
            let fraction = Float(centre - Double(lower))
            let first = min(max(lower, 0), source - 1)
            let second = min(max(lower + 1, 0), source - 1)
            if first == second { return (first, [1]) }
            return (first, [1 - fraction, fraction])
        }
    }
}
