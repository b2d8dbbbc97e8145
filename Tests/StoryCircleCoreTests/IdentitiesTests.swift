import Foundation
import Testing
@testable import StoryCircleCore

/// Typed identities and command names read and write as the plain strings they were, so messages and
/// stored records stay byte for byte the same.
@Suite("Identities")
struct IdentitiesTests {
    private struct Holder: Codable, Equatable {
        var player: PlayerID
        var member: MemberID?
        var room: RoomCode
        var scores: [PlayerID: Int]
        var commands: [CommandName]
    }

    @Test func encodeAsTheirStrings() throws {
        let holder = Holder(player: "p3", member: "m-7", room: "482913", scores: ["p3": 900], commands: [.start, .release])
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(holder), as: UTF8.self)
        #expect(json == #"{"commands":["start","release"],"member":"m-7","player":"p3","room":"482913","scores":{"p3":900}}"#)
        #expect(try JSONDecoder().decode(Holder.self, from: Data(json.utf8)) == holder)
    }

    @Test func readAsTheirStrings() {
        let player: PlayerID = "p12"
        #expect(player.rawValue == "p12" && "\(player)" == "p12" && player == PlayerID("p12"))
        #expect(PlayerID("p10") < PlayerID("p2"), "ordered as strings, as the ids always were")
        #expect(RoomState.room(ofResumeToken: "482913.q3X") == RoomCode("482913"))
    }

    @Test func commandNamesAreTheWireNamesInTheirOrder() {
        #expect(TeacherCommand.names == ["start", "pause", "resume", "replay", "retry", "reveal", "next", "skip", "kick", "block", "release", "lock", "unlock", "end", "settings"])
        #expect(TeacherCommand.kick(player: "Ana").commandName == .kick && TeacherCommand.next.name == "next")
    }
}
