/// One record of a CSV file: its fields and the line it starts on (1 for the header), so a problem can be
/// shown where a person opening the file in an editor will find it.
public struct CSVRecord: Sendable, Equatable {
    public var line: Int
    public var fields: [String]

    public init(line: Int, fields: [String]) {
        self.line = line
        self.fields = fields
    }
}

/// Reads CSV as RFC 4180 writes it, and as spreadsheets and rostering systems export it: fields quoted or
/// not, `""` inside quotes, line breaks inside quotes, records ended by CRLF, LF or CR, a UTF-8 byte order
/// mark ignored, blank lines skipped. Everything is bounded, so a file that is not what it claims costs a
/// refusal, not the server's memory.
public enum CSVReader {
    public struct Limits: Sendable, Equatable {
        /// Bytes of one field once unquoted.
        public var maximumFieldBytes: Int
        /// Fields of one record.
        public var maximumFields: Int
        /// Records of one file, the header included.
        public var maximumRecords: Int

        public init(maximumFieldBytes: Int = 1024, maximumFields: Int = 256, maximumRecords: Int = 200_000) {
            self.maximumFieldBytes = maximumFieldBytes
            self.maximumFields = maximumFields
            self.maximumRecords = maximumRecords
        }
    }

    /// Why a file could not be read; `line` is where the record with the problem starts.
    public enum Problem: Error, Sendable, Equatable {
        case invalidUTF8(line: Int)
        /// A quoted field that never closes.
        case unterminatedQuote(line: Int)
        /// A quote inside an unquoted field, or text after a closing quote.
        case strayQuote(line: Int)
        case fieldTooLong(line: Int, field: Int)
        case tooManyFields(line: Int)
        case tooManyRecords

        public var line: Int? {
            switch self {
            case .invalidUTF8(let line), .unterminatedQuote(let line), .strayQuote(let line), .fieldTooLong(let line, _), .tooManyFields(let line): line
            case .tooManyRecords: nil
            }
        }

        /// The stable code a page words (`csv_<reason>`).
        public var reason: String {
            switch self {
            case .invalidUTF8: "invalid_utf8"
            case .unterminatedQuote: "unterminated_quote"
            case .strayQuote: "stray_quote"
            case .fieldTooLong: "field_too_long"
            case .tooManyFields: "too_many_fields"
            case .tooManyRecords: "too_many_records"
            }
        }
    }

    private static let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ","), cr = UInt8(ascii: "\r"), lf = UInt8(ascii: "\n")

    /// Every record of `bytes`, or the first problem (a damaged quote leaves nothing after it trustworthy).
    public static func records(_ bytes: [UInt8], limits: Limits = Limits()) -> Result<[CSVRecord], Problem> {
        var records: [CSVRecord] = []
        var index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var line = 1
        while index < bytes.count {
            let start = line
            var fields: [String] = []
            var field: [UInt8] = []
            var endOfRecord = false
            while !endOfRecord {
                field.removeAll(keepingCapacity: true)
                if index < bytes.count, bytes[index] == quote {
                    // Quoted: runs to the quote not doubled; line breaks inside belong to the field.
                    index += 1
                    var closed = false
                    while index < bytes.count {
                        let byte = bytes[index]
                        if byte == quote {
                            if index + 1 < bytes.count, bytes[index + 1] == quote {
                                field.append(quote)
                                index += 2
                                continue
                            }
                            index += 1
                            closed = true
                            break
                        }
                        if byte == lf || (byte == cr && (index + 1 >= bytes.count || bytes[index + 1] != lf)) { line += 1 }
                        field.append(byte)
                        index += 1
                        if field.count > limits.maximumFieldBytes { return .failure(.fieldTooLong(line: start, field: fields.count + 1)) }
                    }
                    guard closed else { return .failure(.unterminatedQuote(line: start)) }
                    if index < bytes.count, bytes[index] != comma, bytes[index] != cr, bytes[index] != lf { return .failure(.strayQuote(line: start)) }
                } else {
                    while index < bytes.count, bytes[index] != comma, bytes[index] != cr, bytes[index] != lf {
                        if bytes[index] == quote { return .failure(.strayQuote(line: start)) }
                        field.append(bytes[index])
                        index += 1
                        if field.count > limits.maximumFieldBytes { return .failure(.fieldTooLong(line: start, field: fields.count + 1)) }
                    }
                }
                guard let text = String(validating: field, as: UTF8.self) else { return .failure(.invalidUTF8(line: start)) }
                fields.append(text)
                if fields.count > limits.maximumFields { return .failure(.tooManyFields(line: start)) }
                if index >= bytes.count {
                    endOfRecord = true
                } else if bytes[index] == comma {
                    index += 1
                } else {
                    // CRLF, LF or a lone CR ends the record.
                    index += bytes[index] == cr && index + 1 < bytes.count && bytes[index + 1] == lf ? 2 : 1
                    line += 1
                    endOfRecord = true
                }
            }
            if fields == [""] { continue }
            records.append(CSVRecord(line: start, fields: fields))
            if records.count > limits.maximumRecords { return .failure(.tooManyRecords) }
        }
        return .success(records)
    }
}
