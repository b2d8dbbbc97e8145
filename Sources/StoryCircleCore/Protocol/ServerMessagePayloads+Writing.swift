// <generated from the payloads' declarations by GeneratedTablesTests: edit those, then `STORYCIRCLE_WRITE_GENERATED=1 swift test --filter GeneratedTables`>
// Each payload's members as `Codable` writes them: stored properties in declaration order, `nil`s left out.

extension NarrationNotice: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("code", code)
        writer.field("message", message)
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

extension WordTiming: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("at", at)
        writer.field("start", start)
        writer.field("length", length)
    }
}

extension RoomError: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("code", code)
        writer.field("message", message)
        writer.field("params", params)
    }
}

extension PictureView: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("id", id)
        writer.field("alt", alt)
    }
}

extension SentencePictureView: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("sentence", sentence)
        writer.field("id", id)
        writer.field("alt", alt)
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

extension NarrationPlanMessage: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("startAt", startAt)
        writer.field("gapMs", gapMs)
        writer.field("mode", mode)
        writer.field("playsAudio", playsAudio)
        writer.field("sentences", sentences)
        writer.field("notice", notice)
        writer.field("pictures", pictures)
        writer.field("total", total)
    }
}

extension NarrationSentenceMessage: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("sentence", sentence)
        writer.field("ready", ready)
        writer.field("total", total)
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
        writer.field("picture", picture)
        writer.field("optionPictures", optionPictures)
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

extension PlayerStanding: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("score", score)
        writer.field("rank", rank)
        writer.field("streak", streak)
        writer.field("results", results)
        writer.field("ahead", ahead)
    }
}

extension PlaceAhead: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("nickname", nickname)
        writer.field("points", points)
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

extension Notice: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("code", code)
        writer.field("message", message)
        writer.field("blocked", blocked)
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

extension StoreHealthStatus: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("ok", ok)
        writer.field("code", code)
        writer.field("reason", reason)
        writer.field("message", message)
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
// </generated>
