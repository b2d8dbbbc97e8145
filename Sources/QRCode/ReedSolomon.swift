/// Reed–Solomon error correction over GF(2⁸) with the QR polynomial x⁸+x⁴+x³+x²+1.
enum ReedSolomon {
    private static let tables: (exp: [UInt8], log: [UInt8]) = {
        var exp = [UInt8](repeating: 0, count: 512)
        var log = [UInt8](repeating: 0, count: 256)
        var value = 1
        for i in 0..<255 {
            exp[i] = UInt8(value)
            log[value] = UInt8(i)
            value <<= 1
            if value & 0x100 != 0 { value ^= 0x11D }
        }
        for i in 255..<512 { exp[i] = exp[i - 255] }
        return (exp, log)
    }()

    static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        if a == 0 || b == 0 { return 0 }
        return tables.exp[Int(tables.log[Int(a)]) + Int(tables.log[Int(b)])]
    }

    /// The generator polynomial of `degree`, highest coefficient first (the leading 1 omitted).
    static func generator(degree: Int) -> [UInt8] {
        var polynomial = [UInt8](repeating: 0, count: degree)
        polynomial[degree - 1] = 1
        var root: UInt8 = 1
        for _ in 0..<degree {
            for j in 0..<degree {
                polynomial[j] = multiply(polynomial[j], root)
                if j + 1 < degree { polynomial[j] ^= polynomial[j + 1] }
            }
            root = multiply(root, 0x02)
        }
        return polynomial
    }

    /// The `degree` error-correction codewords for `data`.
    static func remainder(of data: [UInt8], degree: Int) -> [UInt8] {
        let divisor = generator(degree: degree)
        var result = [UInt8](repeating: 0, count: degree)
        for byte in data {
            let factor = byte ^ result[0]
            result.removeFirst()
            result.append(0)
            for i in 0..<degree {
                result[i] ^= multiply(divisor[i], factor)
            }
        }
        return result
    }
}
