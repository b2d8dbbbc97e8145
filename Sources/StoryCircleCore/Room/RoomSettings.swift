/// Where the narration plays.
public enum NarrationMode: String, Sendable, Codable, CaseIterable {
    /// On every child's device (headphones, or a quiet class of tablets).
    case devices
    /// On dashboards only: the projector reads to the whole class.
    case dashboard
    /// Nowhere: the text follows along silently, paced as if read aloud.
    case off
}

/// A room's choices, set at creation and changeable in the lobby.
public struct RoomSettings: Sendable, Equatable, Codable {
    public static let questionSecondsRange = StoryLimits.timeLimit
    public static let maxPlayersRange = 1...10_000

    /// Faster correct answers earn more (full points under half a second, half at the deadline).
    public var speedPoints: Bool
    /// Correct answers in a row earn a growing bonus.
    public var streakBonus: Bool
    /// `false` is no-timer mode: questions stay open until everyone has answered or the teacher reveals.
    public var timer: Bool
    /// The time limit for questions that do not set their own.
    public var questionSeconds: Int
    /// Children may join after the story has started.
    public var lateJoin: Bool
    public var narration: NarrationMode
    /// Read each question and its options aloud too, for children who cannot read yet.
    public var readQuestions: Bool
    public var maxPlayers: Int
    /// An espeak-ng voice to use instead of the story's (another language, or one installed here).
    public var voice: String?
    /// The projector shows every child's right and wrong answers by name. Off by default: a class should
    /// not see who got what wrong unless the teacher chooses it. A display setting, changeable at any time.
    public var answerGrid: Bool
    /// The language of the room's screens (`RoomLanguage.available`); nil follows the voice. A display
    /// setting, changeable at any time.
    public var language: String?
    /// Children's phones show their place in the class and the classmate just ahead ("3rd place, 117
    /// points behind Dina"), the top of the class at each reveal and the podium. Off by default: a child
    /// sees their own progress, never a named classmate's lead, unless the teacher chooses a contest. A
    /// display setting, changeable at any time (it shows from the next reveal or the end).
    public var competitive: Bool

    public init(
        speedPoints: Bool = true, streakBonus: Bool = true, timer: Bool = true, questionSeconds: Int = 20,
        lateJoin: Bool = true, narration: NarrationMode = .devices, readQuestions: Bool = false, maxPlayers: Int = 3_000,
        voice: String? = nil, answerGrid: Bool = false, language: String? = nil, competitive: Bool = false
    ) {
        self.speedPoints = speedPoints
        self.streakBonus = streakBonus
        self.timer = timer
        self.questionSeconds = questionSeconds
        self.lateJoin = lateJoin
        self.narration = narration
        self.readQuestions = readQuestions
        self.maxPlayers = maxPlayers
        self.voice = voice
        self.answerGrid = answerGrid
        self.language = language
        self.competitive = competitive
    }

    private enum CodingKeys: String, CodingKey {
        case speedPoints, streakBonus, timer, questionSeconds, lateJoin, narration, readQuestions, maxPlayers, voice, answerGrid, language, competitive
    }

    /// Every field is optional when decoding, so settings stored by an older release (or written by hand
    /// in a configuration file) take today's defaults for what they lack.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = RoomSettings()
        speedPoints = try container.decodeIfPresent(Bool.self, forKey: .speedPoints) ?? defaults.speedPoints
        streakBonus = try container.decodeIfPresent(Bool.self, forKey: .streakBonus) ?? defaults.streakBonus
        timer = try container.decodeIfPresent(Bool.self, forKey: .timer) ?? defaults.timer
        questionSeconds = try container.decodeIfPresent(Int.self, forKey: .questionSeconds) ?? defaults.questionSeconds
        lateJoin = try container.decodeIfPresent(Bool.self, forKey: .lateJoin) ?? defaults.lateJoin
        narration = try container.decodeIfPresent(NarrationMode.self, forKey: .narration) ?? defaults.narration
        readQuestions = try container.decodeIfPresent(Bool.self, forKey: .readQuestions) ?? defaults.readQuestions
        maxPlayers = try container.decodeIfPresent(Int.self, forKey: .maxPlayers) ?? defaults.maxPlayers
        voice = try container.decodeIfPresent(String.self, forKey: .voice)
        answerGrid = try container.decodeIfPresent(Bool.self, forKey: .answerGrid) ?? defaults.answerGrid
        language = try container.decodeIfPresent(String.self, forKey: .language)
        competitive = try container.decodeIfPresent(Bool.self, forKey: .competitive) ?? defaults.competitive
    }

    public var scoring: ScoringRules {
        ScoringRules(speedPoints: speedPoints, streakBonus: streakBonus)
    }

    /// Applies `patch`, or explains which value is out of range (and changes nothing).
    public func applying(_ patch: RoomSettingsPatch) throws(RoomError) -> RoomSettings {
        var settings = self
        if let value = patch.speedPoints { settings.speedPoints = value }
        if let value = patch.streakBonus { settings.streakBonus = value }
        if let value = patch.timer { settings.timer = value }
        if let value = patch.questionSeconds {
            guard Self.questionSecondsRange.contains(value) else {
                throw RoomError(.invalidSettings, "questionSeconds must be from \(Self.questionSecondsRange.lowerBound) to \(Self.questionSecondsRange.upperBound).",
                                params: ["setting": "questionSeconds", "min": String(Self.questionSecondsRange.lowerBound), "max": String(Self.questionSecondsRange.upperBound)])
            }
            settings.questionSeconds = value
        }
        if let value = patch.lateJoin { settings.lateJoin = value }
        if let value = patch.narration { settings.narration = value }
        if let value = patch.readQuestions { settings.readQuestions = value }
        if let value = patch.maxPlayers {
            guard Self.maxPlayersRange.contains(value) else {
                throw RoomError(.invalidSettings, "maxPlayers must be from \(Self.maxPlayersRange.lowerBound) to \(Self.maxPlayersRange.upperBound).",
                                params: ["setting": "maxPlayers", "min": String(Self.maxPlayersRange.lowerBound), "max": String(Self.maxPlayersRange.upperBound)])
            }
            settings.maxPlayers = value
        }
        if let value = patch.voice {
            let name = value.trimmingWhitespace()
            guard name.isEmpty || (StoryLimits.voiceLength.contains(name.count) && NarrationSettings.isWellFormedVoice(name)) else {
                throw RoomError(.invalidSettings, "voice must be a voice name such as en, en-gb, es or piper:en_US-joe-medium.", params: ["setting": "voice"])
            }
            settings.voice = name.isEmpty ? nil : name
        }
        if let value = patch.answerGrid { settings.answerGrid = value }
        if let value = patch.language {
            let name = value.trimmingWhitespace().lowercased()
            guard name.isEmpty || RoomLanguage.available.contains(name) else {
                throw RoomError(.invalidSettings, "language must be one of \(RoomLanguage.available.joined(separator: ", ")) (or empty for the voice's).", params: ["setting": "language"])
            }
            settings.language = name.isEmpty ? nil : name
        }
        if let value = patch.competitive { settings.competitive = value }
        return settings
    }
}

/// Some settings to change; absent fields stay as they are.
public struct RoomSettingsPatch: Sendable, Equatable, Codable {
    public var speedPoints: Bool?
    public var streakBonus: Bool?
    public var timer: Bool?
    public var questionSeconds: Int?
    public var lateJoin: Bool?
    public var narration: NarrationMode?
    public var readQuestions: Bool?
    public var maxPlayers: Int?
    /// A voice name; an empty string goes back to the story's voice.
    public var voice: String?
    public var answerGrid: Bool?
    /// A language of `RoomLanguage.available`; an empty string follows the voice again.
    public var language: String?
    public var competitive: Bool?

    public init(
        speedPoints: Bool? = nil, streakBonus: Bool? = nil, timer: Bool? = nil, questionSeconds: Int? = nil,
        lateJoin: Bool? = nil, narration: NarrationMode? = nil, readQuestions: Bool? = nil, maxPlayers: Int? = nil,
        voice: String? = nil, answerGrid: Bool? = nil, language: String? = nil, competitive: Bool? = nil
    ) {
        self.speedPoints = speedPoints
        self.streakBonus = streakBonus
        self.timer = timer
        self.questionSeconds = questionSeconds
        self.lateJoin = lateJoin
        self.narration = narration
        self.readQuestions = readQuestions
        self.maxPlayers = maxPlayers
        self.voice = voice
        self.answerGrid = answerGrid
        self.language = language
        self.competitive = competitive
    }

    /// Whether the patch changes only how screens look (the answer grid, the language, the contest): those may change in any phase,
    /// while the rest shape the game and change only before it starts.
    public var changesOnlyDisplay: Bool {
        speedPoints == nil && streakBonus == nil && timer == nil && questionSeconds == nil && lateJoin == nil
            && narration == nil && readQuestions == nil && maxPlayers == nil && voice == nil
    }
}

/// The room's pacing, in milliseconds. Leads are how far ahead a synchronised instant is announced, so
/// every screen has the message before the moment it describes.
public struct RoomTiming: Sendable, Equatable {
    public var planLeadMs = 2_000
    public var sentenceGapMs = 300
    public var resumeLeadMs = 800
    /// A streamed sentence that arrives after the one before it ended starts this long after it arrives,
    /// so every screen has it (and can fetch its audio) first.
    public var lateSentenceLeadMs = 800
    public var unlockLeadMs = 1_500
    public var questionLeadMs = 1_000
    /// The most network delay (half a round trip) credited to an answer, for speed and for the deadline.
    public var answerGraceMs = 250
    /// Dashboards get at most one coalesced roster/scoreboard update per this interval.
    public var screenFlushMs = 250
    /// After a restart, how long children get to reconnect before a reopened question starts again.
    public var recoveryLeadMs = 5_000
    /// Children see the top this many at each reveal.
    public var topCount = 5
    /// The podium names at most this many (at least 3); the rest of a shared place is "and N more".
    public var podiumCount = 8

    public init() {}
}
