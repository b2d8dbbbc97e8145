import StoryCircleCore

enum RoomSettingFlags {
    /// The room settings the flags of `start` and `room create` ask for.
    static func patch(_ parsed: ParsedArguments, spec: CommandSpec) throws(UsageError) -> RoomSettingsPatch {
        var patch = RoomSettingsPatch()
        if let mode = parsed.value("narrate") {
            guard let narration = NarrationMode(rawValue: mode) else {
                throw UsageError(message: "The value '\(mode)' is invalid for '--narrate <mode>': use devices, dashboard or off.", spec: spec)
            }
            patch.narration = narration
        }
        if parsed.has("no-speed-points") { patch.speedPoints = false }
        if parsed.has("no-streaks") { patch.streakBonus = false }
        if parsed.has("no-timer") { patch.timer = false }
        if parsed.has("no-late-join") { patch.lateJoin = false }
        if parsed.has("read-questions") { patch.readQuestions = true }
        if let seconds = parsed.value("question-seconds") {
            guard let value = Int(seconds), RoomSettings.questionSecondsRange.contains(value) else {
                throw UsageError(message: "The value '\(seconds)' is invalid for '--question-seconds <seconds>': use a whole number from \(RoomSettings.questionSecondsRange.lowerBound) to \(RoomSettings.questionSecondsRange.upperBound).", spec: spec)
            }
            patch.questionSeconds = value
        }
        if let voice = parsed.value("voice") { patch.voice = voice }
        return patch
    }
}
