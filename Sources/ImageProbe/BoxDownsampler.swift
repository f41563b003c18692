/// Averages rows, as they are decoded, into boxes of a small image that fits `limit` × `limit`: the placeholder's
/// reduction, computed without ever holding the full image.
///
/// Target box `(tx, ty)` covers source columns `tx·w/tw ..< (tx+1)·w/tw` and rows `ty·h/th ..< (ty+1)·h/th`
/// (integer division), colour averaged weighted by alpha so transparent pixels do not darken their neighbours.
/// The sums are integers, so the order pixels arrive in (Adam7 passes included) cannot change the result. An image
/// that already fits is kept as it is.
struct BoxDownsampler: DecodedRowConsumer {
    let width: Int
    let height: Int
    let targetWidth: Int
    let targetHeight: Int
    /// Target column of every source column, and target row of every source row.
    private var targetColumn: [Int32] = []
    private var targetRow: [Int32] = []
    /// Per target pixel: red·alpha, green·alpha, blue·alpha, alpha; or, when the image already fits, its pixels.
    private var sums: [UInt64] = []
    private var kept: [UInt8] = []

    /// Plans the reduction of a `width` × `height` image.
    init(width: Int, height: Int, limit: Int) {
        self.width = width
        self.height = height
        let longest = max(width, height)
        if longest <= limit {
            (targetWidth, targetHeight) = (width, height)
        } else {
            targetWidth = max(1, (width * limit + longest / 2) / longest)
            targetHeight = max(1, (height * limit + longest / 2) / longest)
        }
    }

    /// Bytes the reduction holds for an image of this size.
    static func bufferBytes(width: Int, height: Int, limit: Int) -> Int {
        let plan = BoxDownsampler(width: width, height: height, limit: limit)
        if !plan.reduces { return width * height * 4 }
        return (width + height) * 4 + plan.targetWidth * plan.targetHeight * 4 * 8
    }

    private var reduces: Bool { targetWidth != width || targetHeight != height }

    /// Allocates the sums; called once the memory is reserved.
    mutating func allocate() {
        guard reduces else {
            kept = [UInt8](repeating: 0, count: width * height * 4)
            return
        }
        // Since the target is no larger than the source, every box holds at least one pixel.
        targetColumn = (0..<targetWidth).flatMap { target in
            let columns = target * width / targetWidth..<(target + 1) * width / targetWidth
            return [Int32](repeating: Int32(target), count: columns.count)
        }
        targetRow = (0..<targetHeight).flatMap { target in
            let rows = target * height / targetHeight..<(target + 1) * height / targetHeight
            return [Int32](repeating: Int32(target), count: rows.count)
        }
        sums = [UInt64](repeating: 0, count: targetWidth * targetHeight * 4)
    }

    mutating func consume(_ row: DecodedRow) {
        guard reduces else {
            for index in 0..<row.count {
                let to = (row.y * width + row.firstX + index * row.xStep) * 4
                for channel in 0..<4 { kept[to + channel] = row.pixels[index * 4 + channel] }
            }
            return
        }
        let rowStart = Int(targetRow[row.y]) * targetWidth
        targetColumn.withUnsafeBufferPointer { targetColumn in
            sums.withUnsafeMutableBufferPointer { sums in
                for index in 0..<row.count {
                    let pixel = row.pixels + index * 4
                    let alpha = UInt64(pixel[3])
                    let cell = (rowStart + Int(targetColumn[row.firstX + index * row.xStep])) * 4
                    sums[cell] += UInt64(pixel[0]) * alpha
                    sums[cell + 1] += UInt64(pixel[1]) * alpha
                    sums[cell + 2] += UInt64(pixel[2]) * alpha
                    sums[cell + 3] += alpha
                }
            }
        }
    }

    /// The reduced image.
    func image() -> RGBAImage {
        guard reduces else { return RGBAImage(width: width, height: height, pixels: kept) }
        var output = [UInt8](repeating: 0, count: targetWidth * targetHeight * 4)
        for targetY in 0..<targetHeight {
            let rows = (targetY + 1) * height / targetHeight - targetY * height / targetHeight
            for targetX in 0..<targetWidth {
                let columns = (targetX + 1) * width / targetWidth - targetX * width / targetWidth
                let count = UInt64(rows * columns)
                let index = (targetY * targetWidth + targetX) * 4
                let alpha = sums[index + 3]
                if alpha > 0 {
                    for channel in 0..<3 { output[index + channel] = UInt8((sums[index + channel] + alpha / 2) / alpha) }
                }
                output[index + 3] = UInt8((alpha + count / 2) / count)
            }
        }
        return RGBAImage(width: targetWidth, height: targetHeight, pixels: output)
    }
}
