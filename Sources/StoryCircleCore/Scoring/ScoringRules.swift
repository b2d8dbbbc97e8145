/// How a correct answer turns into points, configurable per room.
///
/// With speed points, an answer within the first half second earns the full `basePoints`, falling linearly
/// to half of it at the deadline (Kahoot's rule). Without them, or without a timer, every correct answer
/// earns `basePoints`. With the streak bonus, each correct answer in a row after the first adds
/// `streakStep`, up to `streakCap`. Wrong and missing answers earn nothing and break the streak.
public struct ScoringRules: Sendable, Equatable {
    public static let basePoints = 1_000
    public static let fullPointsWindowMs = 500
    public static let streakStep = 100
    public static let streakCap = 500

    public var speedPoints: Bool
    public var streakBonus: Bool

    public init(speedPoints: Bool = true, streakBonus: Bool = true) {
        self.speedPoints = speedPoints
        self.streakBonus = streakBonus
    }

    /// Points for one answer.
    /// - Parameters:
    ///   - elapsedMs: time from the question opening to the answer, already corrected for network delay.
    ///   - timeLimitMs: the question's time limit, or `nil` in no-timer mode.
    ///   - streakBefore: correct answers in a row immediately before this question.
    public func points(correct: Bool, elapsedMs: Int, timeLimitMs: Int?, streakBefore: Int) -> Int {
        guard correct else { return 0 }
        var points = Self.basePoints
        if speedPoints, let timeLimitMs, timeLimitMs > Self.fullPointsWindowMs, elapsedMs > Self.fullPointsWindowMs {
            let late = Double(min(elapsedMs, timeLimitMs) - Self.fullPointsWindowMs)
            let window = Double(timeLimitMs - Self.fullPointsWindowMs)
            points = Int((Double(Self.basePoints) * (1 - 0.5 * late / window)).rounded())
        }
        if streakBonus {
            points += min(streakBefore * Self.streakStep, Self.streakCap)
        }
        return points
    }
}
