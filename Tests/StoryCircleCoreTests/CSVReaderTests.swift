import Testing
@testable import StoryCircleCore

/// CSV as RFC 4180 writes it and as exports bend it: every record with the line it starts on, every
/// damage refused at its line, every size bounded.
@Suite("CSV reader")
struct CSVReaderTests {
    func read(_ text: String, limits: CSVReader.Limits = CSVReader.Limits()) -> Result<[CSVRecord], CSVReader.Problem> {
        CSVReader.records(Array(text.utf8), limits: limits)
    }

    func fields(_ text: String) throws -> [[String]] { try read(text).get().map(\.fields) }

    @Test func plainFieldsAndLines() throws {
        let records = try read("a,b,c\n1,2,3\n").get()
        #expect(records == [CSVRecord(line: 1, fields: ["a", "b", "c"]), CSVRecord(line: 2, fields: ["1", "2", "3"])])
    }

    @Test func quotedFieldsKeepCommasDoubledQuotesAndLineBreaks() throws {
        let records = try read("name,note\n\"Rossi, Maya\",\"she said \"\"hi\"\"\"\n\"two\r\nlines\",x\nlast,y").get()
        #expect(records.map(\.fields) == [["name", "note"], ["Rossi, Maya", "she said \"hi\""], ["two\r\nlines", "x"], ["last", "y"]])
        #expect(records.map(\.line) == [1, 2, 3, 5], "a record starts on the line after the one a quoted break ran over")
    }

    @Test func crlfLoneCrAndNoFinalBreakEndRecords() throws {
        #expect(try fields("a,b\r\n1,2\r3,4") == [["a", "b"], ["1", "2"], ["3", "4"]])
    }

    @Test func aByteOrderMarkIsNotPartOfTheFirstColumn() throws {
        let records = try CSVReader.records([0xEF, 0xBB, 0xBF] + Array("sourcedId,name\n".utf8)).get()
        #expect(records.first?.fields.first == "sourcedId")
    }

    @Test func emptyFieldsAndBlankLines() throws {
        #expect(try fields("a,,c,\n\n\"\",x\n\n") == [["a", "", "c", ""], ["", "x"]])
    }

    @Test func accentsAndEmojiAreRead() throws {
        #expect(try fields("Zoë,Łukasz,🦊\n") == [["Zoë", "Łukasz", "🦊"]])
    }

    @Test func anUnterminatedQuoteIsRefusedAtTheLineItStarts() {
        #expect(read("a,b\n1,\"open\n2,3\n") == .failure(.unterminatedQuote(line: 2)))
    }

    @Test func textAfterAClosingQuoteOrAQuoteInsideAFieldIsRefused() {
        #expect(read("a,b\n\"x\"y,1\n") == .failure(.strayQuote(line: 2)))
        #expect(read("a,b\nx,ab\"c\n") == .failure(.strayQuote(line: 2)))
    }

    @Test func invalidUTF8IsRefusedAtItsLine() {
        #expect(CSVReader.records(Array("a\nok\n".utf8) + [0xC3, 0x28, 0x0A]) == .failure(.invalidUTF8(line: 3)))
    }

    @Test func sizesAreBounded() {
        let limits = CSVReader.Limits(maximumFieldBytes: 4, maximumFields: 3, maximumRecords: 2)
        #expect(read("abcd,x\n", limits: limits) == .success([CSVRecord(line: 1, fields: ["abcd", "x"])]))
        #expect(read("a\nabcde\n", limits: limits) == .failure(.fieldTooLong(line: 2, field: 1)))
        #expect(read("a,\"abcde\"\n", limits: limits) == .failure(.fieldTooLong(line: 1, field: 2)))
        #expect(read("a,b,c,d\n", limits: limits) == .failure(.tooManyFields(line: 1)))
        #expect(read("a\nb\nc\n", limits: limits) == .failure(.tooManyRecords))
    }
}
