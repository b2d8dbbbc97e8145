import Foundation
import StoryCircleCore
import StoryCircleServer

/// How a room is made, the same for `POST /api/rooms` and the all-in-one `start` command: its voice checked
/// against the voices this node has, a class's settings under the room's own, and the links a teacher is
/// handed.
public struct RoomMaker: Sendable {
    let registry: RoomRegistry
    /// The real narrator (nil when a test injected its own: then every voice is taken as it is).
    let speech: SpeechNarrator?
    let publicURL: String

    public func create(
        story: Story, settings: RoomSettingsPatch? = nil, storyID: String? = nil, schoolClass: SchoolClass? = nil, warnings: [String] = [],
        owner: Owner? = nil
    ) async throws -> CreatedRoomResponse {
        let settings = schoolClass.map { $0.roomSettings(settings) } ?? settings
        if let speech, case .failure(let refusal) = speech.check(voice: Self.voice(of: story, settings: settings)) {
            throw refusal.roomError
        }
        let room = try await registry.directory.createRoom(story: story, settings: settings, storyID: storyID, classRoster: schoolClass.map(ClassRoster.init), owner: owner)
        return CreatedRoomResponse(room, publicURL: publicURL, warnings: warnings)
    }

    /// The voice a room will read with: its own setting, else its story's.
    static func voice(of story: Story, settings: RoomSettingsPatch?) -> String {
        let override = settings?.voice?.trimmingCharacters(in: .whitespaces) ?? ""
        return override.isEmpty ? story.narration.voice : override
    }
}

/// A new room as a teacher is handed it (the answer to `POST /api/rooms`): shown once.
public struct CreatedRoomResponse: Encodable, Sendable {
    public var code: String
    public var title: String
    public var teacherToken: String
    public var dashboardToken: String
    public var joinURL: String
    public var dashboardURL: String
    public var teacherURL: String
    public var warnings: [String]

    init(_ room: CreatedRoom, publicURL: String, warnings: [String]) {
        code = room.code
        title = room.title
        teacherToken = room.teacherToken
        dashboardToken = room.dashboardToken
        joinURL = JoinCode.joinURL(publicURL: publicURL, code: room.code, language: room.language)
        dashboardURL = "\(publicURL)/dashboard#room=\(room.code)&token=\(room.dashboardToken)"
        teacherURL = "\(publicURL)/teacher#room=\(room.code)&token=\(room.teacherToken)"
        self.warnings = warnings
    }
}
