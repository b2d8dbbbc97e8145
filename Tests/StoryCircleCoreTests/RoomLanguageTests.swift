import Foundation
import Testing
@testable import StoryCircleCore

@Suite("The room's language, and refusals in codes")
struct RoomLanguageTests {
    private func story(voice: String) -> Story {
        var story = Fixtures.story
        story.narration.voice = voice
        return story
    }

    private func welcomeLanguage(_ room: RoomDriver, _ connection: ConnectionID) -> String? {
        room.messages(to: connection).compactMap { if case .welcome(let w) = $0 { w.room.language } else { nil } }.last
    }

    @Test func aVoiceNamesTheCatalogLanguageOrNone() {
        #expect(RoomLanguage.of(voice: "es") == "es")
        #expect(RoomLanguage.of(voice: "es-419") == "es")
        #expect(RoomLanguage.of(voice: "pt-BR") == "pt")
        #expect(RoomLanguage.of(voice: "roa/fr") == "fr")
        #expect(RoomLanguage.of(voice: "en-gb+f3") == "en")
        #expect(RoomLanguage.of(voice: "ar") == "ar")
        #expect(RoomLanguage.of(voice: "piper:es_ES-davefx-medium") == "es")
        #expect(RoomLanguage.of(voice: "piper:en_US-joe-medium") == "en")
        #expect(RoomLanguage.of(voice: "sw") == nil, "no catalog: the room falls back to English")
        #expect(RoomLanguage.of(voice: "") == nil)
    }

    @Test func theLanguageFollowsTheStorysVoiceThenTheRoomsVoice() throws {
        var room = RoomDriver(story: story(voice: "es"))
        let ana = try room.child("Ana")
        #expect(welcomeLanguage(room, ana.connection) == "es")
        #expect(room.state.language == "es")

        var swahili = RoomDriver(story: story(voice: "sw"))
        let ben = try swahili.child("Ben")
        #expect(welcomeLanguage(swahili, ben.connection) == "en")

        var voiced = RoomDriver(story: story(voice: "en"), settings: RoomSettings(voice: "de"))
        let cat = try voiced.child("Cat")
        #expect(welcomeLanguage(voiced, cat.connection) == "de", "the room's own voice speaks German, so do its screens")
    }

    @Test func theTeacherChoosesALanguageAtAnyTimeAndEveryScreenIsTold() throws {
        var room = RoomDriver(story: story(voice: "es"))
        let ana = try room.child("Ana")
        let board = room.dashboard()
        try room.startAndPrepare()
        room.narrateToFirstQuestion()
        #expect(room.state.phase.name == .question)

        let directives = try room.command(.settings(RoomSettingsPatch(language: "ar")))
        #expect(room.state.settings.language == "ar")
        #expect(directives.contains(.persist(.roomUpdated(settings: room.state.settings, locked: false, at: room.now))), "stored, so a restart keeps it")
        for connection in [ana.connection, board] {
            guard case .room(let status) = room.messages(to: connection).last else { Issue.record("no room status"); continue }
            #expect(status.language == "ar")
        }

        // Empty goes back to the voice's language.
        try room.command(.settings(RoomSettingsPatch(language: "")))
        #expect(room.state.settings.language == nil && room.state.language == "es")
    }

    @Test func aLanguageWithoutACatalogIsRefusedAndChangesNothing() throws {
        var room = RoomDriver()
        _ = room.teacher()
        #expect(throws: RoomError.self) { try room.command(.settings(RoomSettingsPatch(language: "klingon"))) }
        do {
            try room.command(.settings(RoomSettingsPatch(language: "sw")))
            Issue.record("sw was accepted")
        } catch {
            #expect(error.code == .invalidSettings)
        }
        #expect(room.state.settings.language == nil)
    }

    @Test func theChosenLanguageIsRestoredAfterARestart() throws {
        var room = RoomDriver(story: story(voice: "en"))
        _ = try room.child("Ana")
        try room.command(.settings(RoomSettingsPatch(language: "fr")))
        let (rebuilt, _) = RoomState.restore(room.archive(), lookalikes: LookalikeTable(), at: room.now + 1_000)
        #expect(rebuilt.settings.language == "fr")
        #expect(rebuilt.language == "fr")
        // And settings stored before languages existed decode with none chosen.
        let old = try JSONDecoder().decode(RoomSettings.self, from: Data(#"{"timer":false}"#.utf8))
        #expect(old.language == nil && old.timer == false)
    }

    @Test func refusalsThatNameSomeoneCarryTheNameAsAParameter() throws {
        var room = RoomDriver()
        _ = try room.child("Ana")
        let second = room.newConnection()
        room.apply(.hello(second, .join(nickname: "ana", resumeToken: "token-\(UUID().uuidString)"), at: room.now))
        #expect(room.lastError(to: second)?.code == .nicknameTaken)
        #expect(room.lastError(to: second)?.params == ["nickname": "ana"])

        let long = room.newConnection()
        room.apply(.hello(long, .join(nickname: String(repeating: "x", count: 41), resumeToken: "token-\(UUID().uuidString)"), at: room.now))
        #expect(room.lastError(to: long)?.params == ["problem": "too_long", "length": "41", "max": "40"])
    }

    @Test func aRemovedChildIsToldWithACode() throws {
        var room = RoomDriver()
        let ana = try room.child("Ana")
        let ben = try room.child("Ben")
        try room.command(.kick(player: "Ana"))
        try room.command(.block(player: "Ben"))
        guard case .kicked(let kicked) = room.messages(to: ana.connection).last, case .kicked(let blocked) = room.messages(to: ben.connection).last else {
            Issue.record("no kicked message"); return
        }
        #expect(kicked.code == .kicked && blocked.code == .blocked && blocked.blocked == true)
    }

    @Test func codesAndParametersAreOnTheWire() throws {
        let error = ServerMessage.error(RoomError(.nicknameTaken, "Someone is called \"Zoë\".", params: ["nickname": "Zoë \"ü\"", "a\u{1}": "\u{2028}"]))
        let text = String(decoding: error.encoded(), as: UTF8.self)
        #expect(text == #"{"type":"error","code":"nickname_taken","message":"Someone is called \"Zoë\".","params":{"a\u0001":"\u2028","nickname":"Zoë \"ü\""}}"#)
        let storage = String(decoding: ServerMessage.storage(StoreHealthStatus(ok: false, message: "disk full", reason: .diskFull)).encoded(), as: UTF8.self)
        #expect(storage == #"{"type":"storage","ok":false,"code":"storage_unavailable","reason":"disk_full","message":"disk full"}"#)
        let failure = ServerMessage.narrationError(NarrationFailure(message: "No voice xx.", reason: .voiceNotInstalled, params: ["voice": "xx"]))
        #expect(String(decoding: failure.encoded(), as: UTF8.self)
            == #"{"type":"narration.error","code":"narration_failed","message":"No voice xx.","reason":"voice_not_installed","params":{"voice":"xx"}}"#)
        let back = String(decoding: ServerMessage.storage(StoreHealthStatus(ok: true)).encoded(), as: UTF8.self)
        #expect(back == #"{"type":"storage","ok":true}"#)
    }

    /// The stores' own words, as SQLite, glibc and libpq write them, each read as the cause the teacher's
    /// page words.
    @Test(arguments: [
        ("database or disk is full (No space left on device)", StoreProblem.diskFull),
        ("disk I/O error (No space left on device)", .diskFull),
        ("PostgreSQL error 53100 while committing: could not extend file \"base/16384/16385\": No space left on device", .diskFull),
        ("attempt to write a readonly database (Read-only file system)", .readOnly),
        ("disk I/O error (Permission denied)", .readOnly),
        ("disk I/O error (Input/output error)", .ioError),
        ("disk I/O error", .ioError),
        ("the room store is closed", .closed),
        ("PostgreSQL error while connecting: connection to server at \"127.0.0.1\", port 5432 failed: Connection refused", .unreachable),
        ("PostgreSQL error 25006 while committing: cannot execute INSERT in a read-only transaction", .unreachable),
        ("PostgreSQL error while committing: no answer from the server within 5 s", .unreachable),
        ("an earlier record of this room was not stored (database or disk is full)", .diskFull),
        ("something nobody expected", .unknown),
    ])
    func aStoreFailureIsReadAsItsCause(reason: String, cause: StoreProblem) {
        #expect(StoreProblem(reason: reason) == cause)
        #expect(StoreHealthStatus.failing(reason).reason == cause)
        #expect(StoreHealthStatus.failing(reason).message?.contains(reason) == true, "the store's words stay in the English")
    }
}
