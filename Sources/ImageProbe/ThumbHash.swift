import ByteTools
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A small RGBA image (straight alpha, rows packed) used to build placeholders and to turn resampled previews.
struct RGBAImage: Equatable {
    var width: Int
    var height: Int
    var pixels: [UInt8]

    /// The image shown the way EXIF `orientation` says, by mapping every display pixel back to
    /// the stored pixel it comes from.
    func applying(orientation: Int) -> RGBAImage {
        guard orientation >= 2 && orientation <= 8 else { return self }
        let swaps = orientation >= 5
        let displayWidth = swaps ? height : width
        let displayHeight = swaps ? width : height
        var output = [UInt8](repeating: 0, count: pixels.count)
        for displayY in 0..<displayHeight {
            for displayX in 0..<displayWidth {
                let (storedX, storedY): (Int, Int)
                switch orientation {
                case 2: (storedX, storedY) = (width - 1 - displayX, displayY)
                case 3: (storedX, storedY) = (width - 1 - displayX, height - 1 - displayY)
                case 4: (storedX, storedY) = (displayX, height - 1 - displayY)
                case 5: (storedX, storedY) = (displayY, displayX)
                case 6: (storedX, storedY) = (displayY, height - 1 - displayX)
                case 7: (storedX, storedY) = (width - 1 - displayY, height - 1 - displayX)
                default: (storedX, storedY) = (width - 1 - displayY, displayX)
                }
                let from = (storedY * width + storedX) * 4
                let to = (displayY * displayWidth + displayX) * 4
                output[to..<to + 4] = pixels[from..<from + 4]
            }
        }
        return RGBAImage(width: displayWidth, height: displayHeight, pixels: output)
    }
}

/// ThumbHash (Evan Wallace, https://evanw.github.io/thumbhash/): a ~25-byte DCT summary of
/// an image from which a client renders a blurred placeholder with the right aspect ratio.
enum ThumbHash {
    /// JavaScript's `Math.round`, which the reference encoder uses: halves round up.
    @inline(__always)
    private static func roundHalfUp(_ value: Double) -> Int { Int((value + 0.5).rounded(.down)) }

    /// Encodes an image of at most 100 × 100 pixels.
    /// - Parameter image: Straight-alpha RGBA; reduce it with ``BoxDownsampler`` first.
    /// - Returns: The hash bytes.
    static func encode(_ image: RGBAImage) -> [UInt8] {
        let width = image.width
        let height = image.height
        let pixelCount = width * height
        precondition(width <= 100 && height <= 100 && pixelCount > 0, "ThumbHash needs 1...100 pixels per side")
        let rgba = image.pixels

        var averageRed = 0.0, averageGreen = 0.0, averageBlue = 0.0, averageAlpha = 0.0
        for index in 0..<pixelCount {
            let alpha = Double(rgba[index * 4 + 3]) / 255
            averageRed += alpha / 255 * Double(rgba[index * 4])
            averageGreen += alpha / 255 * Double(rgba[index * 4 + 1])
            averageBlue += alpha / 255 * Double(rgba[index * 4 + 2])
            averageAlpha += alpha
        }
        if averageAlpha > 0 {
            averageRed /= averageAlpha
            averageGreen /= averageAlpha
            averageBlue /= averageAlpha
        }

        let hasAlpha = averageAlpha < Double(pixelCount)
        // Fewer luminance terms when alpha needs room in the hash.
        let luminanceLimit = hasAlpha ? 5.0 : 7.0
        let longest = Double(max(width, height))
        let luminanceX = max(1, roundHalfUp(luminanceLimit * Double(width) / longest))
        let luminanceY = max(1, roundHalfUp(luminanceLimit * Double(height) / longest))

        // LPQA: luminance, yellow–blue, red–green, alpha; composited over the average colour.
        var luminance = [Double](repeating: 0, count: pixelCount)
        var yellowBlue = luminance, redGreen = luminance, alphaChannel = luminance
        for index in 0..<pixelCount {
            let alpha = Double(rgba[index * 4 + 3]) / 255
            let red = averageRed * (1 - alpha) + alpha / 255 * Double(rgba[index * 4])
            let green = averageGreen * (1 - alpha) + alpha / 255 * Double(rgba[index * 4 + 1])
            let blue = averageBlue * (1 - alpha) + alpha / 255 * Double(rgba[index * 4 + 2])
            luminance[index] = (red + green + blue) / 3
            yellowBlue[index] = (red + green) / 2 - blue
            redGreen[index] = red - green
            alphaChannel[index] = alpha
        }

        /// DCT of one channel into its constant term, AC terms normalised to 0...1, and their scale.
        func encodeChannel(_ channel: [Double], _ countX: Int, _ countY: Int) -> (
            dc: Double, ac: [Double], scale: Double
        ) {
            var dc = 0.0
            var ac: [Double] = []
            var scale = 0.0
            var cosinesX = [Double](repeating: 0, count: width)
            for cy in 0..<countY {
                var cx = 0
                while cx * countY < countX * (countY - cy) {
                    for x in 0..<width { cosinesX[x] = cos(Double.pi / Double(width) * Double(cx) * (Double(x) + 0.5)) }
                    var factor = 0.0
                    for y in 0..<height {
                        let cosineY = cos(Double.pi / Double(height) * Double(cy) * (Double(y) + 0.5))
                        for x in 0..<width { factor += channel[x + y * width] * cosinesX[x] * cosineY }
                    }
                    factor /= Double(pixelCount)
                    if cx > 0 || cy > 0 {
                        ac.append(factor)
                        scale = max(scale, abs(factor))
                    } else {
                        dc = factor
                    }
                    cx += 1
                }
            }
            if scale > 0 { ac = ac.map { 0.5 + 0.5 / scale * $0 } }
            return (dc, ac, scale)
        }

        let l = encodeChannel(luminance, max(3, luminanceX), max(3, luminanceY))
        let p = encodeChannel(yellowBlue, 3, 3)
        let q = encodeChannel(redGreen, 3, 3)
        let a = hasAlpha ? encodeChannel(alphaChannel, 5, 5) : (dc: 0, ac: [], scale: 0)

        let isLandscape = width > height
        let header24 =
            roundHalfUp(63 * l.dc) | roundHalfUp(31.5 + 31.5 * p.dc) << 6
            | roundHalfUp(31.5 + 31.5 * q.dc) << 12 | roundHalfUp(31 * l.scale) << 18 | (hasAlpha ? 1 << 23 : 0)
        let header16 =
            (isLandscape ? luminanceY : luminanceX) | roundHalfUp(63 * p.scale) << 3
            | roundHalfUp(63 * q.scale) << 9 | (isLandscape ? 1 << 15 : 0)
        var hash: [UInt8] = [
            UInt8(header24 & 255), UInt8((header24 >> 8) & 255), UInt8(header24 >> 16),
            UInt8(header16 & 255), UInt8(header16 >> 8),
        ]
        if hasAlpha { hash.append(UInt8(roundHalfUp(15 * a.dc) | roundHalfUp(15 * a.scale) << 4)) }
        let acStart = hash.count
        var acIndex = 0
        for factors in hasAlpha ? [l.ac, p.ac, q.ac, a.ac] : [l.ac, p.ac, q.ac] {
            for factor in factors {
                let byteIndex = acStart + (acIndex >> 1)
                if byteIndex == hash.count { hash.append(0) }
                hash[byteIndex] |= UInt8(roundHalfUp(15 * factor) << ((acIndex & 1) << 2))
                acIndex += 1
            }
        }
        return hash
    }

    /// Standard base64 with padding, as the reference implementation's users store hashes.
    static func base64(_ bytes: [UInt8]) -> String {
        Base64.encode(bytes, alphabet: .standard, padded: true)
    }
}
