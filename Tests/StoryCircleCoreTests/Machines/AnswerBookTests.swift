import Testing
@testable import StoryCircleCore

/// The answer book alone: answers, the count of who has answered, round trips.
@Suite("Answer book")
struct AnswerBookTests {
    private let t0 = ServerTime(milliseconds: 1_000)

    private func answer(_ player: PlayerID, _ question: Int, option: Int = 0) -> AnswerRecord {
        AnswerRecord(player: player, question: question, option: option, receivedAt: t0, elapsedMs: 0, correct: option == 0, points: 0)
    }

    @Test func countsOnlyConnectedPlayersAnsweringTheCountedQuestion() {
        var book = AnswerBook(questionCount: 2)
        book.count(question: 0, among: ["p1", "p2"] as [PlayerID])
        book.accept(answer("p1", 0), presence: .here)
        book.accept(answer("p2", 1), presence: .here)
        book.accept(answer("p3", 0), presence: .away)
        #expect(book.answeredHere == 1)
        #expect(book.answeredHere == book.answeredHere(among: ["p1", "p2"] as [PlayerID], question: 0))
        book.accept(answer("p1", 0, option: 1), presence: .here)
        #expect(book.answeredHere == 1, "a second record for the same player counts once")
    }

    @Test func followsPlayersComingAndGoing() {
        var book = AnswerBook(questionCount: 1)
        book.count(question: 0, among: [PlayerID]())
        book.accept(answer("p1", 0), presence: .away)
        #expect(book.answeredHere == 0)
        book.follow(.init(player: "p1", from: .away, to: .here))
        #expect(book.answeredHere == 1)
        book.follow(.init(player: "p1", from: .here, to: .out))
        #expect(book.answeredHere == 0)
        book.follow(.init(player: "p2", from: .away, to: .here))
        #expect(book.answeredHere == 0, "a player without an answer changes nothing")
    }

    @Test func movingToTheNextQuestionRecounts() {
        var book = AnswerBook(questionCount: 2)
        book.accept(answer("p1", 1), presence: .here)
        book.count(question: 1, among: ["p1", "p2"] as [PlayerID])
        #expect(book.countedQuestion == 1 && book.answeredHere == 1)
    }

    @Test func answersOutsideTheQuizAreIgnored() {
        var book = AnswerBook(questionCount: 1)
        book.accept(answer("p1", 3), presence: .here)
        #expect(book.answer(of: "p1", to: 3) == nil && !book.hasAnswered("p1"))
        #expect(book.answers(to: 3).isEmpty)
    }

    @Test func concludedQuestionsFormAPrefix() {
        var book = AnswerBook(questionCount: 3)
        book.conclude(1, skipped: true)
        #expect(book.concluded == 2 && book.skipped == [1])
        book.conclude(0, skipped: false)
        #expect(book.concluded == 2)
        book.conclude(7, skipped: false)
        #expect(book.concluded == 2, "a question not in the quiz concludes nothing")
    }

    @Test func onlyTheFirstAskingCounts() {
        var book = AnswerBook(questionCount: 1)
        book.asked(0, at: t0)
        book.asked(0, at: t0 + 5_000)
        #expect(book.askedAt[0] == t0)
    }

    @Test func roundTripsAreBoundedAndForgotten() {
        var book = AnswerBook(questionCount: 1)
        let connection = ConnectionID(1)
        book.noteRoundTrip(-5, of: connection)
        #expect(book.roundTrip(of: connection) == 0)
        book.noteRoundTrip(1_000_000, of: connection)
        #expect(book.roundTrip(of: connection) == AnswerBook.maximumRoundTripMs)
        var rebuilt = AnswerBook(questionCount: 1)
        rebuilt.keepRoundTrips(of: [connection], from: book)
        #expect(rebuilt.roundTrip(of: connection) == AnswerBook.maximumRoundTripMs)
        book.forget(connection)
        #expect(book.roundTrips[connection] == nil)
    }

    @Test func tellsWhichAnswersWereNotKept() {
        var earlier = AnswerBook(questionCount: 2)
        earlier.accept(answer("p1", 1), presence: .here)
        let rebuilt = AnswerBook(questionCount: 2)
        #expect(rebuilt.lacksAnswer(of: "p1", keptIn: earlier))
        #expect(!rebuilt.lacksAnswer(of: "p2", keptIn: earlier))
    }
}
