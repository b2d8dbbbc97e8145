/// A CSV as a download a teacher opens in a spreadsheet: UTF-8 with a byte order mark (without it Excel
/// reads the text as the system's code page and mangles accents), and named after what it is about and the
/// day, e.g. `The Brave Gear 2026-12-07.csv`.
public struct CSVFile: Sendable, Equatable {
    public var name: String
    public var text: String

    /// `parts`: what the file is about (a story's title, a class's name), in order; `day`: the day it is of.
    public init(naming parts: [String], day: ServerTime, text: String) {
        let words = parts.map(Self.plain).filter { !$0.isEmpty }
        name = (words + [String(ClassReport.iso8601(day).prefix(10))]).joined(separator: " ") + ".csv"
        self.text = text
    }

    public var body: [UInt8] { [0xEF, 0xBB, 0xBF] + Array(text.utf8) }

    /// The `Content-Disposition` value: a plain ASCII `filename` for old clients and `filename*` with the
    /// name itself in UTF-8 (RFC 6266, RFC 8187).
    public var contentDisposition: String {
        "attachment; filename=\"\(Self.asciiFallback(name))\"; filename*=UTF-8''\(Self.percentEncoded(name))"
    }

    /// What may stand in a file name on every system: no path separators, control or reserved characters,
    /// one space between words, at most 80 characters.
    static func plain(_ text: String) -> String {
        let reserved: Set<Character> = ["/", "\\", ":", "*", "?", "\"", "<", ">", "|"]
        let cleaned = String(text.map { character -> Character in
            if reserved.contains(character) || character.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) { return " " }
            return character
        })
        let words = cleaned.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        return String(words.prefix(80)).trimmingDots()
    }

    /// Letters with accents lose them (é → e); anything else outside printable ASCII becomes `_`.
    static func asciiFallback(_ name: String) -> String {
        var out = ""
        for scalar in name.unicodeScalars {
            if scalar.isASCII, scalar.value >= 0x20, scalar != "\"", scalar != "\\", scalar != "%" {
                out.unicodeScalars.append(scalar)
            } else if let base = latinBases[scalar] {
                out.unicodeScalars.append(base)
            } else if scalar.properties.generalCategory == .nonspacingMark {
                continue
            } else {
                out.append("_")
            }
        }
        return out
    }

    static func percentEncoded(_ name: String) -> String {
        let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for byte in name.utf8 {
            if unreserved.contains(byte) { out.append(byte) } else { out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]] }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

private extension String {
    /// No name of a file starts or ends with a dot (hidden files; Windows drops a trailing one).
    func trimmingDots() -> String {
        var text = Substring(self)
        while text.first == "." || text.first == " " { text = text.dropFirst() }
        while text.last == "." || text.last == " " { text = text.dropLast() }
        return String(text)
    }
}

/// Latin letters with accents and their plain letter, for the ASCII file name.
private let latinBases: [Unicode.Scalar: Unicode.Scalar] = {
    let groups: [(Unicode.Scalar, String)] = [
        ("A", "ÀÁÂÃÄÅĀĂĄ"), ("a", "àáâãäåāăą"), ("C", "ÇĆĈĊČ"), ("c", "çćĉċč"), ("D", "ĎĐ"), ("d", "ďđ"),
        ("E", "ÈÉÊËĒĔĖĘĚ"), ("e", "èéêëēĕėęě"), ("G", "ĜĞĠĢ"), ("g", "ĝğġģ"), ("I", "ÌÍÎÏĨĪĬĮİ"), ("i", "ìíîïĩīĭįı"),
        ("N", "ÑŃŅŇ"), ("n", "ñńņň"), ("O", "ÒÓÔÕÖØŌŎŐ"), ("o", "òóôõöøōŏő"), ("S", "ŚŜŞŠ"), ("s", "śŝşšß"),
        ("U", "ÙÚÛÜŨŪŬŮŰŲ"), ("u", "ùúûüũūŭůűų"), ("Y", "ÝŸ"), ("y", "ýÿ"), ("Z", "ŹŻŽ"), ("z", "źżž"),
        ("L", "ĹĻĽŁ"), ("l", "ĺļľł"), ("R", "ŔŖŘ"), ("r", "ŕŗř"), ("T", "ŢŤ"), ("t", "ţť"),
    ]
    var table: [Unicode.Scalar: Unicode.Scalar] = [:]
    for (base, letters) in groups { for letter in letters.unicodeScalars { table[letter] = base } }
    return table
}()
