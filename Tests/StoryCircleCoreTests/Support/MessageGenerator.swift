@testable import StoryCircleCore

/// Random server messages of every kind, for comparing the hand-written encoder with Foundation's: every
/// optional sometimes absent and sometimes present, numbers at their extremes, and strings made of what
/// breaks encoders (control characters, quotes, backslashes, U+2028 and U+2029, emoji sequences,
/// combining marks, the last code points of the planes, right-to-left marks).
struct MessageGenerator {
    var random: SeededRandom

    init(seed: UInt64) {
        random = SeededRandom(seed: seed)
    }

    private static let nastyScalars: [Unicode.Scalar] = {
        var scalars = (0x00..<0x20).map { Unicode.Scalar(UInt8($0)) }
        scalars += ["\"", "\\", "/", "\u{7F}", "\u{80}", "\u{85}", "\u{A0}", "\u{AD}", "\u{2028}", "\u{2029}", "\u{200B}", "\u{200D}",
                    "\u{200E}", "\u{202E}", "\u{FEFF}", "\u{FFFD}", "\u{FFFE}", "\u{FFFF}", "\u{10000}", "\u{10FFFF}", "\u{301}",
                    "\u{1F469}", "\u{1F680}", "\u{1F1EB}", "\u{1F1F7}", "\u{E2}", "\u{E280}", "\u{2027}", "\u{202A}", "<", ">", "&", "'"]
        return scalars
    }()
    private static let plain = Array("Ana Ben 0123 é ñ ß 你好 ".unicodeScalars)

    mutating func string(maxLength: Int = 24) -> String {
        switch Int.random(in: 0..<8, using: &random) {
        case 0: return ""
        case 1: return "Pip the Robot"
        case 2: return ["👩‍🚀", "❤️", "🇫🇷", "e\u{301}", "\r\n", "\u{2028}\u{2029}", "\\u2028", "\"quoted\"", "</script>", "a/b"].randomElement(using: &random)!
        default:
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 1...maxLength, using: &random) {
                let pool = random.oneIn(3) ? Self.nastyScalars : Self.plain
                scalars.append(pool.randomElement(using: &random)!)
            }
            return String(scalars)
        }
    }

    mutating func int() -> Int {
        switch Int.random(in: 0..<6, using: &random) {
        case 0: return [0, 1, -1, 9, 10, 99, 100, Int.max, Int.min, Int(Int32.max), -1_000_000].randomElement(using: &random)!
        case 1: return Int.random(in: Int.min...Int.max, using: &random)
        default: return Int.random(in: -5...5_000, using: &random)
        }
    }

    mutating func time() -> ServerTime {
        ServerTime(milliseconds: random.oneIn(5) ? [Int64.max, Int64.min, 0, -1].randomElement(using: &random)! : Int64.random(in: 1_700_000_000_000...1_800_000_000_000, using: &random))
    }

    /// Finite doubles of every form `description` has: whole, fractional, tiny, huge, negative zero.
    mutating func double() -> Double {
        switch Int.random(in: 0..<7, using: &random) {
        case 0: return [0.0, -0.0, 1.0, 0.1, 1e15, 1e16, 1e20, 1e21, 1e-7, 5e-324, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNormalMagnitude].randomElement(using: &random)!
        case 1: return Double(bitPattern: random.next())
        case 2: return Double(Int.random(in: -1_000_000...1_000_000, using: &random))
        default: return Double.random(in: 0...2_000_000_000_000, using: &random)
        }
    }

    mutating func bool() -> Bool { Bool.random(using: &random) }

    mutating func maybe<T>(_ make: (inout MessageGenerator) -> T) -> T? {
        bool() ? make(&self) : nil
    }

    mutating func list<T>(_ count: ClosedRange<Int> = 0...4, _ make: (inout MessageGenerator) -> T) -> [T] {
        (0..<Int.random(in: count, using: &random)).map { _ in make(&self) }
    }

    mutating func settings() -> RoomSettings {
        RoomSettings(speedPoints: bool(), streakBonus: bool(), timer: bool(), questionSeconds: int(), lateJoin: bool(),
                     narration: NarrationMode.allCases.randomElement(using: &random)!, readQuestions: bool(), maxPlayers: int(),
                     voice: maybe { $0.string() }, answerGrid: bool(), language: maybe { $0.string() }, competitive: bool())
    }

    mutating func outcome() -> QuestionOutcome { [.correct, .wrong, .missed, .skipped].randomElement(using: &random)! }

    mutating func entry() -> ScoreboardEntry {
        ScoreboardEntry(rank: int(), id: string(), nickname: string(), score: int(), streak: int(), connected: bool(),
                        answered: maybe { $0.bool() }, results: list { $0.outcome() })
    }

    mutating func standing() -> PlayerStanding {
        PlayerStanding(score: int(), rank: int(), streak: int(), results: list { $0.outcome() },
                       ahead: maybe { PlaceAhead(nickname: $0.string(), points: $0.int()) })
    }

    mutating func question() -> QuestionView {
        var view = QuestionView(index: int(), count: int(), text: string(maxLength: 80), options: list(0...8) { $0.string() }, opensAt: time(),
                                deadline: maybe { $0.time() }, timeLimitMs: maybe { $0.int() }, audio: maybe { $0.string() })
        view.picture = maybe { $0.picture() }
        view.optionPictures = maybe { $0.list(0...8) { $0.picture() } }
        return view
    }

    mutating func picture() -> PictureView {
        PictureView(id: string(maxLength: 64), alt: string(maxLength: 80))
    }

    mutating func reveal() -> Reveal {
        Reveal(question: int(), correctOption: int(), explanation: maybe { $0.string(maxLength: 80) }, distribution: list(0...8) { $0.int() },
               you: maybe { PlayerResult(option: $0.maybe { $0.int() }, outcome: $0.outcome(), points: $0.int(), standing: $0.standing()) },
               top: list(0...6) { $0.entry() })
    }

    mutating func plan() -> NarrationPlanMessage {
        NarrationPlanMessage(startAt: time(), gapMs: int(), mode: NarrationMode.allCases.randomElement(using: &random)!, playsAudio: bool(),
                             sentences: list(0...3) { $0.sentence() },
                             notice: maybe { NarrationNotice(code: $0.string(), message: $0.string(maxLength: 200)) },
                             pictures: maybe { $0.list(0...3) { SentencePictureView(sentence: $0.int(), picture: $0.picture()) } },
                             total: maybe { $0.int() })
    }

    mutating func sentence() -> NarratedSentence {
        NarratedSentence(index: int(), text: string(maxLength: 80), durationMs: int(),
                         words: list { WordTiming(at: $0.int(), start: $0.int(), length: $0.int()) }, audio: maybe { $0.string() })
    }

    mutating func finished() -> Finished {
        Finished(podium: list(0...8) { $0.entry() }, podiumMore: maybe { PodiumMore(rank: $0.int(), count: $0.int()) },
                 you: maybe { $0.standing() }, entries: maybe { $0.list { $0.entry() } })
    }

    mutating func lobbyPlayer() -> LobbyPlayer {
        LobbyPlayer(id: string(), nickname: string(), connected: bool())
    }

    mutating func snapshot() -> RoomSnapshot {
        var snapshot = RoomSnapshot(code: string(), title: string(), phase: [.lobby, .preparing, .error, .narrating, .question, .reveal, .finished].randomElement(using: &random)!,
                                    paused: bool(), locked: bool(), settings: settings(), language: string(), questionCount: int(), playerCount: int())
        snapshot.preparing = maybe { Preparing(ready: $0.int(), total: $0.int()) }
        snapshot.error = maybe { $0.string() }
        snapshot.errorReason = maybe { NarrationProblem.Reason.allCases.randomElement(using: &$0.random)! }
        snapshot.errorParams = maybe { ["voice": $0.string()] }
        snapshot.plan = maybe { $0.plan() }
        snapshot.sentence = maybe { $0.int() }
        snapshot.sentenceAt = maybe { $0.time() }
        snapshot.question = maybe { $0.question() }
        snapshot.yourAnswer = maybe { $0.int() }
        snapshot.reveal = maybe { $0.reveal() }
        snapshot.finished = maybe { $0.finished() }
        snapshot.you = maybe { $0.standing() }
        snapshot.players = maybe { $0.list { $0.lobbyPlayer() } }
        snapshot.scoreboard = maybe { $0.list { $0.entry() } }
        snapshot.commands = maybe { $0.list { $0.string() } }
        snapshot.schoolClass = maybe { ClassRosterView(id: $0.string(), name: $0.string(), members: $0.list(0...4) { $0.rosterMember() }) }
        return snapshot
    }

    /// One message of kind `kind` (0 ..< `kinds`), so a test can be sure every kind comes up.
    static let kinds = 24

    mutating func message(kind: Int) -> ServerMessage {
        switch kind {
        case 0: .welcome(Welcome(role: [.child, .dashboard, .teacher].randomElement(using: &random)!, player: maybe { PlayerInfo(id: $0.string(), nickname: $0.string()) },
                                 token: maybe { $0.string() }, serverTime: time(), room: snapshot(), dashboardToken: maybe { $0.string() }))
        case 1: .error(RoomError(ErrorCode.allCases.randomElement(using: &random)!, string(maxLength: 80),
                                 params: maybe { generator in Dictionary(generator.list(0...3) { ($0.string(), $0.string()) }, uniquingKeysWith: { first, _ in first }) }))
        case 2: .pong(Pong(id: int(), clientTime: maybe { $0.double() }, serverTime: time()))
        case 3: .lobby(Lobby(players: list(0...6) { $0.lobbyPlayer() }, count: int()))
        case 4: .preparing(Preparing(ready: int(), total: int()))
        case 5: .narrationPlan(plan())
        case 6: .progress(SentenceProgress(sentence: int(), at: time()))
        case 7: .narrationComplete(Instant(at: time()))
        case 8: .narrationError(NarrationFailure(message: string(maxLength: 80), reason: maybe { NarrationProblem.Reason.allCases.randomElement(using: &$0.random)! }, params: maybe { ["voice": $0.string(maxLength: 20)] }))
        case 9: .quizUnlock(QuizUnlock(at: time(), questionCount: int()))
        case 10: .question(question())
        case 11: .answerAck(AnswerAck(question: int(), option: int()))
        case 12: .reveal(reveal())
        case 13: .scoreboard(ScoreboardUpdate(entries: list(0...6) { $0.entry() }, answers: maybe { AnswerProgress(question: $0.int(), answered: $0.int(), total: $0.int()) }))
        case 14: .paused(Paused(what: string(), sentence: maybe { $0.int() }, remainingMs: maybe { $0.int() }))
        case 15: .resumed(Resumed(question: maybe { $0.int() }, opensAt: maybe { $0.time() }, deadline: maybe { $0.time() }))
        case 16: .room(RoomStatus(locked: bool(), settings: settings(), language: string(), commands: maybe { $0.list { $0.string() } }))
        case 17: .finished(finished())
        case 18: .kicked(Notice(code: [.kicked, .blocked].randomElement(using: &random)!, message: string(), blocked: maybe { $0.bool() }))
        case 19: .narrationSentence(NarrationSentenceMessage(sentence: sentence(), ready: int(), total: int()))
        case 20: .storage(StoreHealthStatus(ok: bool(), message: maybe { $0.string(maxLength: 80) }))
        case 21: .names(NamesList(room: string(), schoolClass: maybe { ClassRef(name: $0.string()) },
                                  children: list(0...5) { NameChoice(id: $0.string(), name: $0.string(), avatar: $0.string(), taken: $0.bool()) }))
        case 22: .narrationNotice(NarrationNotice(code: string(), message: string(maxLength: 80)))
        default: .classRoster(ClassRosterUpdate(members: list(0...5) { $0.rosterMember() }))
        }
    }

    mutating func rosterMember() -> RosterMember {
        RosterMember(member: string(), name: string(), avatar: string(), player: maybe { $0.string() }, taken: bool(), connected: bool())
    }

    mutating func message() -> ServerMessage {
        message(kind: Int.random(in: 0..<Self.kinds, using: &random))
    }
}
