/// The bounds a story must stay within. They keep a room's messages small, keep the narration to a
/// classroom length and turn obvious typos (a 3,000-second timer) into errors instead of surprises.
public enum StoryLimits {
    public static let titleLength = 1...120
    public static let sentenceCount = 1...200
    public static let sentenceLength = 1...600
    public static let wordCount = 1...3_000
    public static let questionCount = 1...50
    public static let questionLength = 1...300
    public static let optionCount = 2...8
    public static let optionLength = 1...120
    public static let explanationLength = 1...500
    /// Seconds a question may stay open.
    public static let timeLimit = 5...300
    /// Words per minute espeak-ng speaks at.
    public static let rate = 80...450
    public static let pitch = 0...99
    public static let voiceLength = 1...40
}
