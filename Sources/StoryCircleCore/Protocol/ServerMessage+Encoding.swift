import FoundationEssentials

/// The server's messages as bytes, written by `JSONWriter` rather than `JSONEncoder`: a reveal and a
/// podium are one message per child, and Foundation's encoder cost several times what the rest of a send
/// does. Each payload writes its members in declaration order and leaves out `nil` optionals, exactly as
/// the synthesised `Codable` conformances (still used to decode, and as the reference) do;
/// `ServerMessageEncodingTests` checks the two agree for every kind of message, nasty strings included.
extension ServerMessage {
    /// The message as the UTF-8 bytes of one text frame.
    public func encoded() -> [UInt8] {
        var writer = JSONWriter(capacity: expectedSize)
        writer.beginObject()
        writer.field("type", type)
        switch self {
        case .welcome(let payload): payload.writeMembers(to: &writer)
        case .error(let payload): payload.writeMembers(to: &writer)
        case .pong(let payload): payload.writeMembers(to: &writer)
        case .lobby(let payload): payload.writeMembers(to: &writer)
        case .preparing(let payload): payload.writeMembers(to: &writer)
        case .narrationPlan(let payload): payload.writeMembers(to: &writer)
        case .narrationSentence(let payload): payload.writeMembers(to: &writer)
        case .narrationNotice(let payload): payload.writeMembers(to: &writer)
        case .progress(let payload): payload.writeMembers(to: &writer)
        case .narrationComplete(let payload): payload.writeMembers(to: &writer)
        case .narrationError(let payload): payload.writeMembers(to: &writer)
        case .quizUnlock(let payload): payload.writeMembers(to: &writer)
        case .question(let payload): payload.writeMembers(to: &writer)
        case .answerAck(let payload): payload.writeMembers(to: &writer)
        case .reveal(let payload): payload.writeMembers(to: &writer)
        case .scoreboard(let payload): payload.writeMembers(to: &writer)
        case .paused(let payload): payload.writeMembers(to: &writer)
        case .resumed(let payload): payload.writeMembers(to: &writer)
        case .room(let payload): payload.writeMembers(to: &writer)
        case .finished(let payload): payload.writeMembers(to: &writer)
        case .kicked(let payload): payload.writeMembers(to: &writer)
        case .storage(let payload): payload.writeMembers(to: &writer)
        case .names(let payload): payload.writeMembers(to: &writer)
        case .classRoster(let payload): payload.writeMembers(to: &writer)
        }
        writer.endObject()
        // Only a non-finite number (a `Pong` made in code, never one decoded from JSON) has no JSON form.
        return writer.failed ? encodedByFoundation() : writer.bytes
    }

    /// The message as Foundation's `JSONEncoder` writes it: the reference `encoded()` is tested against.
    public func encodedByFoundation() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        // Every payload is plain data: encoding fails only for a non-finite number.
        return Array((try? encoder.encode(self)) ?? Data(#"{"type":"error","code":"internal_error","message":"Encoding failed."}"#.utf8))
    }

    /// Room for most messages of the kind at once, so the bytes are rarely copied while growing.
    private var expectedSize: Int {
        switch self {
        case .answerAck, .pong, .progress, .preparing, .narrationComplete, .quizUnlock, .paused, .resumed: 96
        case .error, .kicked, .narrationError, .narrationNotice, .room, .storage: 384
        case .names, .classRoster: 4_096
        case .reveal, .finished, .question, .narrationSentence: 1_024
        case .welcome, .lobby, .narrationPlan, .scoreboard: 4_096
        }
    }
}

extension Role: JSONWritable {}
extension PhaseName: JSONWritable {}
extension NarrationMode: JSONWritable {}
extension QuestionOutcome: JSONWritable {}
extension ErrorCode: JSONWritable {}
extension StoreProblem: JSONWritable {}
extension NarrationProblem.Reason: JSONWritable {}

extension Dictionary: JSONWritable where Key == String, Value == String {
    func write(to writer: inout JSONWriter) { writer.stringObject(self) }
}

extension RoomError: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("code", code)
        writer.field("message", message)
        writer.field("params", params)
    }
}

extension PlayerInfo: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("id", id)
        writer.field("nickname", nickname)
    }
}

extension Welcome: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("role", role)
        writer.field("player", player)
        writer.field("token", token)
        writer.field("serverTime", serverTime)
        writer.field("room", room)
        writer.field("dashboardToken", dashboardToken)
    }
}

extension Pong: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("id", id)
        writer.field("clientTime", clientTime)
        writer.field("serverTime", serverTime)
    }
}

extension LobbyPlayer: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("id", id)
        writer.field("nickname", nickname)
        writer.field("connected", connected)
    }
}

extension Lobby: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("players", players)
        writer.field("count", count)
    }
}

extension Preparing: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("ready", ready)
        writer.field("total", total)
    }
}

extension WordTiming: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("at", at)
        writer.field("start", start)
        writer.field("length", length)
    }
}

extension NarratedSentence: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("index", index)
        writer.field("text", text)
        writer.field("durationMs", durationMs)
        writer.field("words", words)
        writer.field("audio", audio)
    }
}

extension NarrationPlanMessage: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("startAt", startAt)
        writer.field("gapMs", gapMs)
        writer.field("mode", mode)
        writer.field("playsAudio", playsAudio)
        writer.field("sentences", sentences)
        if let notice { writer.field("notice", notice) }
        if let pictures { writer.field("pictures", pictures) }
        if let total { writer.field("total", total) }
    }
}

extension NarrationSentenceMessage: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("sentence", sentence)
        writer.field("ready", ready)
        writer.field("total", total)
    }
}

extension NarrationNotice: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("code", code)
        writer.field("message", message)
    }
}

extension SentenceProgress: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("sentence", sentence)
        writer.field("at", at)
    }
}

extension Instant: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("at", at)
    }
}

extension NarrationFailure: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("code", code)
        writer.field("message", message)
        writer.field("reason", reason)
        writer.field("params", params)
    }
}

extension QuizUnlock: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("at", at)
        writer.field("questionCount", questionCount)
    }
}

extension QuestionView: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("index", index)
        writer.field("count", count)
        writer.field("text", text)
        writer.field("options", options)
        writer.field("opensAt", opensAt)
        writer.field("deadline", deadline)
        writer.field("timeLimitMs", timeLimitMs)
        writer.field("audio", audio)
        if let picture { writer.field("picture", picture) }
        if let optionPictures { writer.field("optionPictures", optionPictures) }
    }
}

extension AnswerAck: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("question", question)
        writer.field("option", option)
    }
}

extension AnswerProgress: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("question", question)
        writer.field("answered", answered)
        writer.field("total", total)
    }
}

extension PlaceAhead: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("nickname", nickname)
        writer.field("points", points)
    }
}

extension PlayerStanding: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("score", score)
        writer.field("rank", rank)
        writer.field("streak", streak)
        writer.field("results", results)
        writer.field("ahead", ahead)
    }
}

extension PlayerResult: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("option", option)
        writer.field("outcome", outcome)
        writer.field("points", points)
        writer.field("standing", standing)
    }
}

extension ScoreboardEntry: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("rank", rank)
        writer.field("id", id)
        writer.field("nickname", nickname)
        writer.field("score", score)
        writer.field("streak", streak)
        writer.field("connected", connected)
        writer.field("answered", answered)
        writer.field("results", results)
    }
}

extension Reveal: PersonalisedPayload {
    func writeMembersBeforeYou(to writer: inout JSONWriter) {
        writer.field("question", question)
        writer.field("correctOption", correctOption)
        writer.field("explanation", explanation)
        writer.field("distribution", distribution)
    }

    func writeYou(to writer: inout JSONWriter) {
        writer.field("you", you)
    }

    func writeMembersAfterYou(to writer: inout JSONWriter) {
        writer.field("top", top)
    }

    var shared: Reveal {
        var shared = self
        shared.you = nil
        return shared
    }
}

extension ScoreboardUpdate: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("entries", entries)
        writer.field("answers", answers)
    }
}

extension Paused: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("what", what)
        writer.field("sentence", sentence)
        writer.field("remainingMs", remainingMs)
    }
}

extension Resumed: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("question", question)
        writer.field("opensAt", opensAt)
        writer.field("deadline", deadline)
    }
}

extension RoomSettings: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("speedPoints", speedPoints)
        writer.field("streakBonus", streakBonus)
        writer.field("timer", timer)
        writer.field("questionSeconds", questionSeconds)
        writer.field("lateJoin", lateJoin)
        writer.field("narration", narration)
        writer.field("readQuestions", readQuestions)
        writer.field("maxPlayers", maxPlayers)
        writer.field("voice", voice)
        writer.field("answerGrid", answerGrid)
        writer.field("language", language)
        writer.field("competitive", competitive)
    }
}

extension RoomStatus: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("locked", locked)
        writer.field("settings", settings)
        writer.field("language", language)
        writer.field("commands", commands)
    }
}

extension PodiumMore: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("rank", rank)
        writer.field("count", count)
    }
}

extension Finished: PersonalisedPayload {
    func writeMembersBeforeYou(to writer: inout JSONWriter) {
        writer.field("podium", podium)
        writer.field("podiumMore", podiumMore)
    }

    func writeYou(to writer: inout JSONWriter) {
        writer.field("you", you)
    }

    func writeMembersAfterYou(to writer: inout JSONWriter) {
        writer.field("entries", entries)
    }

    var shared: Finished {
        var shared = self
        shared.you = nil
        return shared
    }
}

extension Notice: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("code", code)
        writer.field("message", message)
        writer.field("blocked", blocked)
    }
}

extension StoreHealthStatus: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("ok", ok)
        writer.field("code", code)
        writer.field("reason", reason)
        writer.field("message", message)
    }
}

extension RoomSnapshot: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("code", code)
        writer.field("title", title)
        writer.field("phase", phase)
        writer.field("paused", paused)
        writer.field("locked", locked)
        writer.field("settings", settings)
        writer.field("language", language)
        writer.field("questionCount", questionCount)
        writer.field("playerCount", playerCount)
        writer.field("preparing", preparing)
        writer.field("error", error)
        writer.field("errorReason", errorReason)
        writer.field("errorParams", errorParams)
        writer.field("plan", plan)
        writer.field("sentence", sentence)
        writer.field("sentenceAt", sentenceAt)
        writer.field("question", question)
        writer.field("yourAnswer", yourAnswer)
        writer.field("reveal", reveal)
        writer.field("finished", finished)
        writer.field("you", you)
        writer.field("players", players)
        writer.field("scoreboard", scoreboard)
        writer.field("commands", commands)
        writer.field("class", schoolClass)
    }
}

extension ClassRef: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("name", name)
    }
}

extension NameChoice: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("id", id)
        writer.field("name", name)
        writer.field("avatar", avatar)
        writer.field("taken", taken)
    }
}

extension NamesList: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("room", room)
        writer.fieldOrNull("class", schoolClass)
        writer.field("children", children)
    }
}

extension RosterMember: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("member", member)
        writer.field("name", name)
        writer.field("avatar", avatar)
        writer.fieldOrNull("player", player)
        writer.field("taken", taken)
        writer.field("connected", connected)
    }
}

extension ClassRosterUpdate: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("members", members)
    }
}

extension ClassRosterView: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("id", id)
        writer.field("name", name)
        writer.field("members", members)
    }
}
