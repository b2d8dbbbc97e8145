import Foundation
import Testing
@testable import StoryCircleCore

/// What the core decides when storage fails: a room rebuilt from what its store holds tells every
/// connection where it stands, and the teacher hears that results are not being saved.
@Suite("Storage failures")
struct StorageRecoveryTests {
    private func directives(_ directives: [RoomDirective], to connection: ConnectionID) -> [RoomDirective] {
        directives.filter { directive in
            switch directive {
            case .send(_, let recipients): recipients.contains(connection)
            case .close(let closed, _): closed == connection
            default: false
            }
        }
    }

    private func welcome(_ directives: [RoomDirective], to connection: ConnectionID) -> Welcome? {
        for case .send(.welcome(let welcome), let recipients) in directives where recipients.contains(connection) { return welcome }
        return nil
    }

    @Test func aRoomRebuiltFromItsStoreTellsEachConnectionWhatTheStoreHolds() throws {
        var room = RoomDriver()
        let ana = try room.child("Ana")
        let ben = try room.child("Ben")
        let dan = try room.child("Dan")
        let teacher = room.teacher()
        let board = room.dashboard()
        try room.startAndPrepare()
        room.narrateToFirstQuestion()
        room.answer(ben, question: 0, option: 2)
        let stored = room.archive()

        // From here on nothing was stored: Ana's answer, Cat's join, and a refusal whose close was held.
        room.answer(ana, question: 0, option: 1)
        let cat = try room.child("Cat")
        let refused = room.newConnection()
        room.apply(.hello(refused, .join(nickname: "Ana", resumeToken: "another"), at: room.now))
        let previous = room.state

        let at = room.now + 6_000
        var (rebuilt, startUp) = RoomState.restore(stored, at: at)
        let told = rebuilt.reattach([ana.connection, ben.connection, dan.connection, cat.connection, teacher, board, refused], from: previous, at: at)

        #expect(!startUp.contains { if case .persist = $0 { true } else { false } }, "rebuilding writes nothing")
        guard case .question(let run) = rebuilt.phase else { Issue.record("the question should be open: \(rebuilt.phase)"); return }
        #expect(run.index == 0 && run.opensAt == at + 5_000, "reopened as after a restart")

        let toAna = directives(told, to: ana.connection)
        #expect(toAna.count == 2)
        let anaWelcome = try #require(welcome(toAna, to: ana.connection))
        #expect(anaWelcome.token == nil, "no token: the page has it")
        #expect(anaWelcome.player?.id == ana.id)
        #expect(anaWelcome.room.phase == .question && anaWelcome.room.yourAnswer == nil, "the question is open to her again")
        #expect(toAna.last == .send(.error(RoomError(.storageUnavailable, "Your answer could not be saved yet — tap again.")), to: [ana.connection]))

        let toBen = directives(told, to: ben.connection)
        #expect(toBen.count == 1)
        #expect(welcome(toBen, to: ben.connection)?.room.yourAnswer == 2, "his answer was stored")
        #expect(directives(told, to: dan.connection).count == 1)

        for lost in [cat.connection, refused] {
            let toLost = directives(told, to: lost)
            #expect(welcome(toLost, to: lost) == nil, "no welcome, no token")
            guard case .send(.error(let error), _)? = toLost.first else { Issue.record("expected an error first"); continue }
            #expect(error.code == .storageUnavailable)
            #expect(toLost.last == .close(lost, CloseReason(status: 1013, reason: "storage_unavailable")))
        }
        #expect(welcome(told, to: teacher)?.role == .teacher)
        #expect(welcome(told, to: board)?.role == .dashboard)

        #expect(rebuilt.connectedPlayerCount == 3)
        #expect(rebuilt.tally == rebuilt.recount(question: rebuilt.tally.question), "the reattached children are counted as connected")
        #expect(rebuilt.playerCount == 3, "Cat was never stored")
        #expect(rebuilt.role(of: refused) == nil)

        // Ana taps again and is acknowledged, once that is stored.
        var again = RoomDriver(restoring: rebuilt, at: at, directives: startUp + told)
        again.advance(to: run.opensAt)
        let retried = again.answer(RoomDriver.Child(connection: ana.connection, token: ana.token, id: ana.id), question: 0, option: 1)
        #expect(retried.first { if case .persist(.answer) = $0 { true } else { false } } != nil)
        #expect(retried.contains(.send(.answerAck(AnswerAck(question: 0, option: 1)), to: [ana.connection])))
    }

    @Test func restoringARoomWritesNothingWhereverItWas() throws {
        var room = RoomDriver()
        let ana = try room.child("Ana")
        _ = try room.child("Ben")
        func persists() -> Int {
            RoomState.restore(room.archive(), at: room.now).1.count { if case .persist = $0 { true } else { false } }
        }
        #expect(persists() == 0, "lobby")
        try room.startAndPrepare()
        #expect(persists() == 0, "narrating")
        room.narrateToFirstQuestion()
        #expect(persists() == 0, "question")
        room.answer(ana, question: 0, option: 2)
        try room.command(.reveal)
        #expect(persists() == 0, "reveal")
        try room.command(.end)
        #expect(persists() == 0, "finished")
    }

    @Test func theTeacherHearsWhenStorageFailsAndWhenItWorksAgainOthersDoNot() throws {
        var room = RoomDriver()
        let ana = try room.child("Ana")
        let board = room.dashboard()
        let teacher = room.teacher()

        let failing = room.apply(.storeHealth(problem: "The disk is full.", at: room.now))
        #expect(failing == [.sendAtOnce(.storage(StoreHealthStatus.failing("The disk is full.")), to: [teacher])])
        #expect(room.apply(.storeHealth(problem: "The disk is full.", at: room.now)).isEmpty, "said once")

        let late = room.teacher()
        #expect(room.messages(to: late).map(\.type) == ["welcome", "storage"], "a teacher arriving meanwhile is told at once")
        #expect(room.messages(to: board).map(\.type) == ["welcome"])
        #expect(!room.messages(to: ana.connection).contains { $0.type == "storage" })

        let working = room.apply(.storeHealth(problem: nil, at: room.now))
        #expect(working == [.send(.storage(StoreHealthStatus(ok: true)), to: [teacher, late])], "in order, behind what the room holds")
        let wire = try JSONSerialization.jsonObject(with: Data(ServerMessage.storage(StoreHealthStatus(ok: true)).encoded())) as? NSDictionary
        #expect(wire == ["type": "storage", "ok": true], "no message once it works")
    }
}
