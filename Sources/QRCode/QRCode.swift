/// A QR code (ISO/IEC 18004) for a short text such as a join URL: byte mode, error correction level M,
/// versions 1 to 10 (up to 213 bytes). Written here because it is small and keeps C libraries inside the
/// three wrapper targets; its tests check it with an independent decoder (zbarimg).
public struct QRCode: Sendable, Equatable {
    public enum EncodingError: Error, Equatable {
        case tooLong(bytes: Int, maximum: Int)
    }

    /// Modules per side.
    public let size: Int
    public let version: Int
    /// Row-major, `true` is dark.
    public let modules: [[Bool]]

    /// Blocks per version at level M: (error-correction codewords per block, [data codewords per block]).
    private static let blocks: [(ec: Int, data: [Int])] = [
        (10, [16]), (16, [28]), (26, [44]), (18, [32, 32]), (24, [43, 43]),
        (16, [27, 27, 27, 27]), (18, [31, 31, 31, 31]), (22, [38, 38, 39, 39]),
        (22, [36, 36, 36, 37, 37]), (26, [43, 43, 43, 43, 44]),
    ]
    private static let alignment: [[Int]] = [
        [], [6, 18], [6, 22], [6, 26], [6, 30], [6, 34], [6, 22, 38], [6, 24, 42], [6, 26, 46], [6, 28, 50],
    ]

    public static var maximumBytes: Int { capacity(version: blocks.count) }

    private static func capacity(version: Int) -> Int {
        let dataBits = blocks[version - 1].data.reduce(0, +) * 8
        return (dataBits - 4 - countBits(version)) / 8
    }

    private static func countBits(_ version: Int) -> Int { version < 10 ? 8 : 16 }

    public init(text: String) throws(EncodingError) {
        let bytes = Array(text.utf8)
        guard let version = (1...Self.blocks.count).first(where: { Self.capacity(version: $0) >= bytes.count }) else {
            throw .tooLong(bytes: bytes.count, maximum: Self.maximumBytes)
        }
        self.version = version
        size = version * 4 + 17
        var matrix = Matrix(size: size)
        matrix.drawFunctionPatterns(version: version, alignment: Self.alignment[version - 1])
        matrix.drawCodewords(Self.codewords(for: bytes, version: version))
        // Try every mask and keep the one the standard's penalty rules score lowest.
        var best: Matrix?
        var bestPenalty = Int.max
        for mask in 0..<8 {
            var candidate = matrix
            candidate.apply(mask: mask)
            candidate.drawFormatBits(mask: mask)
            let penalty = candidate.penalty()
            if penalty < bestPenalty {
                bestPenalty = penalty
                best = candidate
            }
        }
        modules = best!.modules
    }

    private static func codewords(for bytes: [UInt8], version: Int) -> [UInt8] {
        var bits: [Bool] = []
        func append(_ value: Int, _ count: Int) {
            for i in stride(from: count - 1, through: 0, by: -1) { bits.append((value >> i) & 1 == 1) }
        }
        append(0b0100, 4)
        append(bytes.count, countBits(version))
        bytes.forEach { append(Int($0), 8) }
        let layout = blocks[version - 1]
        let capacityBits = layout.data.reduce(0, +) * 8
        append(0, min(4, capacityBits - bits.count))
        append(0, (8 - bits.count % 8) % 8)
        var data = stride(from: 0, to: bits.count, by: 8).map { start in
            bits[start..<(start + 8)].reduce(UInt8(0)) { $0 << 1 | ($1 ? 1 : 0) }
        }
        var pad: [UInt8] = [0xEC, 0x11]
        while data.count < capacityBits / 8 {
            data.append(pad[0])
            pad.swapAt(0, 1)
        }

        var dataBlocks: [[UInt8]] = []
        var offset = 0
        for length in layout.data {
            dataBlocks.append(Array(data[offset..<(offset + length)]))
            offset += length
        }
        let ecBlocks = dataBlocks.map { ReedSolomon.remainder(of: $0, degree: layout.ec) }
        var result: [UInt8] = []
        for i in 0..<(layout.data.max() ?? 0) {
            for block in dataBlocks where i < block.count { result.append(block[i]) }
        }
        for i in 0..<layout.ec {
            for block in ecBlocks { result.append(block[i]) }
        }
        return result
    }
}

/// The module grid while a code is being built.
private struct Matrix {
    let size: Int
    var modules: [[Bool]]
    var isFunction: [[Bool]]

    init(size: Int) {
        self.size = size
        modules = Array(repeating: Array(repeating: false, count: size), count: size)
        isFunction = modules
    }

    mutating func set(_ x: Int, _ y: Int, _ dark: Bool) {
        modules[y][x] = dark
        isFunction[y][x] = true
    }

    mutating func drawFunctionPatterns(version: Int, alignment: [Int]) {
        for i in 0..<size {
            set(6, i, i % 2 == 0)
            set(i, 6, i % 2 == 0)
        }
        for (x, y) in [(3, 3), (size - 4, 3), (3, size - 4)] {
            for dy in -4...4 {
                for dx in -4...4 {
                    let distance = max(abs(dx), abs(dy))
                    let (xx, yy) = (x + dx, y + dy)
                    if (0..<size).contains(xx), (0..<size).contains(yy) {
                        set(xx, yy, distance != 2 && distance != 4)
                    }
                }
            }
        }
        let last = alignment.count - 1
        for (i, ax) in alignment.enumerated() {
            for (j, ay) in alignment.enumerated() where !((i == 0 && j == 0) || (i == 0 && j == last) || (i == last && j == 0)) {
                for dy in -2...2 {
                    for dx in -2...2 { set(ax + dx, ay + dy, max(abs(dx), abs(dy)) != 1) }
                }
            }
        }
        drawFormatBits(mask: 0)
        if version >= 7 {
            var remainder = version
            for _ in 0..<12 { remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25) }
            let bits = version << 12 | remainder
            for i in 0..<18 {
                let dark = (bits >> i) & 1 == 1
                let a = size - 11 + i % 3, b = i / 3
                set(a, b, dark)
                set(b, a, dark)
            }
        }
    }

    mutating func drawFormatBits(mask: Int) {
        let data = 0b00 << 3 | mask  // level M
        var remainder = data
        for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
        let bits = (data << 10 | remainder) ^ 0x5412
        func bit(_ i: Int) -> Bool { (bits >> i) & 1 == 1 }
        for i in 0...5 { set(8, i, bit(i)) }
        set(8, 7, bit(6))
        set(8, 8, bit(7))
        set(7, 8, bit(8))
        for i in 9..<15 { set(14 - i, 8, bit(i)) }
        for i in 0..<8 { set(size - 1 - i, 8, bit(i)) }
        for i in 8..<15 { set(8, size - 15 + i, bit(i)) }
        set(8, size - 8, true)
    }

    mutating func drawCodewords(_ codewords: [UInt8]) {
        var bit = 0
        var right = size - 1
        while right >= 1 {
            if right == 6 { right = 5 }
            for vertical in 0..<size {
                for j in 0..<2 {
                    let x = right - j
                    let upward = (right + 1) & 2 == 0
                    let y = upward ? size - 1 - vertical : vertical
                    if !isFunction[y][x], bit < codewords.count * 8 {
                        modules[y][x] = (codewords[bit >> 3] >> (7 - UInt8(bit & 7))) & 1 == 1
                        bit += 1
                    }
                }
            }
            right -= 2
        }
    }

    mutating func apply(mask: Int) {
        for y in 0..<size {
            for x in 0..<size where !isFunction[y][x] {
                let flip: Bool
                switch mask {
                case 0: flip = (x + y) % 2 == 0
                case 1: flip = y % 2 == 0
                case 2: flip = x % 3 == 0
                case 3: flip = (x + y) % 3 == 0
                case 4: flip = (x / 3 + y / 2) % 2 == 0
                case 5: flip = x * y % 2 + x * y % 3 == 0
                case 6: flip = (x * y % 2 + x * y % 3) % 2 == 0
                default: flip = ((x + y) % 2 + x * y % 3) % 2 == 0
                }
                if flip { modules[y][x].toggle() }
            }
        }
    }

    /// The standard's four penalty rules: long runs, 2×2 blocks, finder look-alikes, dark/light balance.
    func penalty() -> Int {
        var total = 0
        let lines = modules + (0..<size).map { x in (0..<size).map { modules[$0][x] } }
        let finderLike: [[Bool]] = [
            [true, false, true, true, true, false, true, false, false, false, false],
            [false, false, false, false, true, false, true, true, true, false, true],
        ]
        for line in lines {
            var run = 1
            for i in 1..<size {
                if line[i] == line[i - 1] {
                    run += 1
                } else {
                    if run >= 5 { total += 3 + run - 5 }
                    run = 1
                }
            }
            if run >= 5 { total += 3 + run - 5 }
            if size >= 11 {
                for start in 0...(size - 11) {
                    let window = Array(line[start..<(start + 11)])
                    if finderLike.contains(window) { total += 40 }
                }
            }
        }
        for y in 0..<(size - 1) {
            for x in 0..<(size - 1) {
                let colour = modules[y][x]
                if modules[y][x + 1] == colour, modules[y + 1][x] == colour, modules[y + 1][x + 1] == colour { total += 3 }
            }
        }
        let dark = modules.reduce(0) { $0 + $1.count { $0 } }
        let percent = dark * 100 / (size * size)
        total += abs(percent - 50) / 5 * 10
        return total
    }
}
