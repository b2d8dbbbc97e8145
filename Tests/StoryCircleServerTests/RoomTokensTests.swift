import Foundation
import Sodium
import Testing
@testable import StoryCircleCore
@testable import StoryCircleServer

/// Room tokens that prove themselves by their MAC (`RoomTokens`), with the real HMAC-SHA-256 (libsodium).
@Suite("Room tokens")
struct RoomTokensTests {
    let tokens = RoomTokens(key: Array(repeating: 0x42, count: 32))

    @Test func aTeacherTokenProvesTeacherAndItsDashboardTokenDashboardForItsRoomOnly() {
        let teacher = tokens.teacherToken(room: "123456")
        let dashboard = RoomCredentials.dashboardToken(forTeacherToken: teacher)
        #expect(tokens.role(of: teacher, room: "123456") == .teacher)
        #expect(tokens.role(of: dashboard, room: "123456") == .dashboard)
        #expect(teacher != dashboard)
        // Another room's code: nothing, whatever the role.
        #expect(tokens.role(of: teacher, room: "123457") == nil)
        #expect(tokens.role(of: dashboard, room: "654321") == nil)
        #expect(tokens.claim(of: teacher)?.room == "123456" && tokens.claim(of: teacher)?.role == .teacher)
        // Each token is new: the random part differs, and so the room's stored hash tells two rooms of one code apart.
        #expect(tokens.teacherToken(room: "123456") != teacher)
    }

    @Test func aDashboardTokenCannotBeMadeIntoATeacherOne() {
        let teacher = tokens.teacherToken(room: "123456")
        let dashboard = RoomCredentials.dashboardToken(forTeacherToken: teacher)
        // Its derivation again gives neither a teacher token nor itself.
        let derived = RoomCredentials.dashboardToken(forTeacherToken: dashboard)
        #expect(tokens.role(of: derived, room: "123456") == nil)
        // Swapping the code in a dashboard token for another room's proves nothing there.
        #expect(tokens.role(of: dashboard.replacingOccurrences(of: "123456", with: "999999"), room: "999999") == nil)
    }

    @Test func anyChangedCharacterProvesNothing() {
        let teacher = tokens.teacherToken(room: "123456")
        let characters = Array(teacher)
        for index in characters.indices where characters[index] != "." {
            var tampered = characters
            tampered[index] = characters[index] == "a" ? "b" : "a"
            let text = String(tampered)
            if text == teacher { continue }
            #expect(tokens.role(of: text, room: "123456") == nil, "changed at \(index)")
        }
        #expect(tokens.role(of: teacher.uppercased(), room: "123456") == nil)
        #expect(tokens.role(of: teacher + "0", room: "123456") == nil)
        #expect(tokens.role(of: String(teacher.dropLast()), room: "123456") == nil)
    }

    @Test func anotherKeysTokensAndOldRandomTokensProveNothing() {
        let other = RoomTokens(key: Array(repeating: 0x43, count: 32))
        #expect(tokens.role(of: other.teacherToken(room: "123456"), room: "123456") == nil)
        // A room made before tokens carried their MAC: 43 random characters, checked only by the store.
        #expect(tokens.role(of: Tokens.generate(), room: "123456") == nil)
        for malformed in ["", ".", "..", "123456..", "123456.x.y", String(repeating: "a", count: 500), "123456.\(String(repeating: "0", count: 32)).\(String(repeating: "0", count: 64))"] {
            #expect(tokens.role(of: malformed, room: "123456") == nil, "\(malformed.prefix(20))")
            #expect(tokens.claim(of: malformed) == nil)
        }
    }

    @Test func theComparisonIsLibsodiumsConstantTimeOne() throws {
        #expect(Sodium.constantTimeEquals(Array("abc".utf8), Array("abc".utf8)))
        #expect(!Sodium.constantTimeEquals(Array("abc".utf8), Array("abd".utf8)))
        #expect(!Sodium.constantTimeEquals(Array("abc".utf8), Array("abcd".utf8)))
        // RFC 4231, test case 2: HMAC-SHA-256 is the real one.
        let mac = Sodium.hmacSHA256(Array("what do ya want for nothing?".utf8), key: Array("Jefe".utf8))
        #expect(RoomTokens.hex(mac) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        // Tokens and the admin token are compared only through it: no `==` on a secret in either file.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        for file in ["Sources/StoryCircleServer/Rooms/RoomTokens.swift", "Sources/StoryCircleApp/HTTP/Routing/Admission.swift"] {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            #expect(text.contains("Sodium.constantTimeEquals"), "\(file)")
            #expect(!text.contains("Hash ==") && !text.contains("== adminTokenHash") && !text.contains("== teacher") && !text.contains("== dashboard"), "\(file)")
        }
    }
}
