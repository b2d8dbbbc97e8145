import Foundation
import LocalCertificates
import Locking
import StoryCircleCore
import StoryCircleApp
import StoryCircleServer

/// `storycircle start STORY.json`: a server and one room, for a teacher who stays in the terminal.
struct StartCommand: ParsableCommand {
    static let noKeys = CommandSpec.Option(long: "no-keys", valueName: nil, help: "Do not read single-key controls from the terminal (and show no key hints).")
    static let storyID = CommandSpec.Option(long: "story-id", valueName: "id", help: "Start the room on this story of the library (see 'story list') instead of a file.")
    static let schoolClass = CommandSpec.Option(long: "class", valueName: "class", help: "A room for this class (its name or id, see 'class list'): children tap their name to join.")
    static let showTokens = CommandSpec.Option(long: "show-tokens", valueName: nil, help: "Print the room's teacher and dashboard links with their tokens instead of the QR code (for a screen no one else sees).")

    private enum Event {
        case key(UInt8)
        case tick
        case signal
    }

    var storyPath: String?
    var storyID: String?
    var className: String?
    var serverOptions: ServerOptions
    var settings: RoomSettingOptions
    var readsKeys: Bool
    var showsTokens: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        storyPath = arguments.positional.first
        storyID = arguments.value(of: Self.storyID)
        className = arguments.value(of: Self.schoolClass)
        switch (storyPath, storyID) {
        case (nil, nil): throw UsageError("Missing expected argument '<story>'.")
        case (_?, _?): throw UsageError("Give a story file or --story-id, not both.")
        case (nil, let id?) where !StoryLibraryIDs.isWellFormed(id):
            throw UsageError("The value '\(id)' is invalid for '\(Self.storyID.usage)': use an id from 'story list'.")
        default: break
        }
        serverOptions = try ServerOptions(arguments)
        settings = try RoomSettingOptions(arguments)
        readsKeys = !arguments.isSet(Self.noKeys)
        showsTokens = arguments.isSet(Self.showTokens)
    }

    func run() async throws -> Int32 {
        let configuration = try serverOptions.configuration()
        // A file is checked before the server starts; a library story once it has.
        var story = try storyPath.map { path throws(CommandFailure) in try StoryFile.require(path) }
        // The server's log lines go above the status line, never through it.
        let status = StatusLine(interactive: Terminal.outputIsInteractive)
        let logger = configuration.log { line in status.log(line) }
        logger.takeLibWebSocketsLines()
        let signals = Signals.stream()
        let hangUps = Signals.hangUps()
        let server = try await ServerOptions.start(configuration, logger: logger)
        if let storyID {
            do {
                guard let library = server.library else { throw CommandFailure("this server keeps no story library (it runs without a database); give a story file.") }
                guard let stored = try await library.story(storyID) else {
                    throw CommandFailure("there is no story \(storyID) in the library; 'storycircle story list' shows the stories there are.")
                }
                story = stored.story
            } catch {
                await server.stop()
                throw error
            }
        }
        var schoolClass: SchoolClass?
        if let className {
            do {
                guard let found = try await server.findClass(className) else {
                    throw CommandFailure("there is no class called \(className); 'storycircle class list' shows the classes there are.")
                }
                schoolClass = found
            } catch {
                await server.stop()
                throw error
            }
        }
        guard let story else { throw CommandFailure("no story to start the room on") }
        // A story file names its pictures by path beside it; a library story already names stored ones.
        let roomStory = if let storyPath { try await server.storingPictures(of: story, storyPath: storyPath) } else { story }
        // The link printed below also signs the browser into the laptop's teacher's account (made on a
        // fresh data folder), who owns this room.
        await server.prepareLaptopTeacher()
        let created = try await server.rooms.create(story: roomStory, settings: settings.patch, storyID: storyID, schoolClass: schoolClass, owner: await server.laptopOwner())
        guard let room = await server.registry.directory.room(created.code) else {
            await server.stop()
            throw CommandFailure("the room disappeared as it was created")
        }
        // The room's tokens go to a file only this user reads, as 'room create' keeps them ('results CODE' finds them).
        let saved = try? Credentials.save(.init(code: created.code, server: server.publicURL, teacherToken: created.teacherToken, dashboardToken: created.dashboardToken))
        try Self.printBanner(title: story.title, room: created, server: server, saved: saved, keys: readsKeys, showTokens: showsTokens)

        let (events, sink) = AsyncStream.makeStream(of: Event.self)
        let terminal = readsKeys ? Terminal() : nil
        // Every task feeding `events` ends with the command: cancelling the key reader's task ends its
        // stream, which wakes its thread out of `poll` and lets it go.
        var forwarders = [
            Task { for await _ in signals { sink.yield(.signal) } },
            Task { [onTerminal = Terminal.outputIsInteractive] in
                for await _ in hangUps {
                    if Signals.terminalHungUp(outputWasTerminal: onTerminal) { sink.yield(.signal) } else { await server.reloadCertificate() }
                }
            },
            Task {
                while !Task.isCancelled {
                    sink.yield(.tick)
                    try? await Task.sleep(for: .milliseconds(400))
                }
            },
        ]
        if readsKeys {
            forwarders.append(Task { for await key in Terminal.keys() { sink.yield(.key(key)) } })
        }
        // After `q`, the next key answers "End the room for everyone? (y/n)".
        var confirmingEnd = false
        let endQuestion = "End the room for everyone? (y/n)"
        var storage = StorageBanner()

        loop: for await event in events {
            switch event {
            case .signal:
                break loop
            case .tick:
                if let line = storage.update(server.storageHealth) { status.note(line) }
                status.show(confirmingEnd ? endQuestion : Self.describe(await room.report(), keys: readsKeys))
            case .key(let key):
                let report = await room.report()
                if confirmingEnd {
                    confirmingEnd = false
                    if key == UInt8(ascii: "y") || key == UInt8(ascii: "Y") {
                        _ = try? await room.perform(.end)
                        status.note("The room has ended. Goodbye!")
                        break loop
                    }
                    status.note("The room goes on.")
                } else if key == UInt8(ascii: "q") {
                    if report.phase == .finished {
                        status.note("Goodbye!")
                        break loop
                    }
                    confirmingEnd = true
                    status.show(endQuestion)
                    continue
                } else if let command = Self.command(for: key, report: report) {
                    do {
                        _ = try await room.perform(command)
                        status.note("→ \(command.name)")
                    } catch {
                        status.note("Cannot \(command.name) now: \(error.message)")
                    }
                } else if key == UInt8(ascii: "t") {
                    if let link = try? server.signInLink(room: created) { status.note(Self.signInNote(link)) }
                } else if key == UInt8(ascii: "k") {
                    status.note(report.phase == .lobby ? "k skips the story once it has started (s starts it)." : "k skips the story; the story is over.")
                } else {
                    continue
                }
                status.show(Self.describe(await room.report(), keys: readsKeys))
            }
        }
        forwarders.forEach { $0.cancel() }
        terminal?.restore()
        status.finish()
        Output.line("Stopping the server…")
        await server.stop()
        var results = saved == nil ? "storycircle results \(created.code) --token <the teacher token>" : "storycircle results \(created.code)"
        // Over HTTPS the command must be told where, and whom to trust, when run from another folder.
        if configuration.resolvedTLS != nil {
            results += " --server \(server.publicURL)"
            let authority = URL(fileURLWithPath: LocalTLSFolder(dataDirectory: configuration.files.dataDirectory).authorityCertificate).standardizedFileURL.path
            if FileManager.default.fileExists(atPath: authority) { results += " --ca-file \(authority)" }
        }
        Output.line("Results stay available: \(results) (while a server runs on this data folder).")
        return ExitCode.success
    }

    private static func command(for key: UInt8, report: RoomReport) -> TeacherCommand? {
        switch key {
        case UInt8(ascii: "s"): report.phase == .error ? .retry : .start
        case UInt8(ascii: "n"): .next
        case UInt8(ascii: "r"): .reveal
        case UInt8(ascii: "p"): report.paused ? .resume : .pause
        // Skip only the story: in the quiz the same command would close a question unscored.
        case UInt8(ascii: "k") where [.preparing, .error, .narrating].contains(report.phase): .skip
        default: nil
        }
    }

    /// The status line. With `keys` it says which key does what now; without (`--no-keys`), no key hints.
    static func describe(_ report: RoomReport, keys: Bool = true) -> String {
        let children = "\(report.players) child\(report.players == 1 ? "" : "ren") (\(report.connectedPlayers) here)"
        var parts: [String] = []
        var hints: [String] = []
        switch report.phase {
        case .lobby:
            parts.append("waiting")
            hints.append("press s to start")
        case .preparing:
            parts.append("preparing the story…")
            hints.append("k to skip to the quiz")
        case .error:
            parts.append("narration failed: \(report.errorMessage ?? "")")
            hints += ["s to try again", "k to skip to the quiz"]
        case .narrating:
            parts.append(report.paused ? "story paused" : "telling the story")
            hints += [report.paused ? "p to resume" : "p to pause", "k to skip to the quiz"]
        case .question:
            let number = (report.question ?? 0) + 1
            parts.append("question \(number)/\(report.questionCount)")
            parts.append("\(report.answers ?? 0)/\(report.players) answered")
            if report.paused { parts.append("paused") }
            hints += [report.paused ? "p to resume" : "p to pause", "r to reveal"]
        case .reveal:
            let number = (report.question ?? 0) + 1
            parts.append("answer \(number)/\(report.questionCount) revealed")
            hints.append("n for " + (number == report.questionCount ? "the podium" : "the next question"))
        case .finished:
            parts.append("finished")
            hints.append("q to quit")
        }
        if report.phase != .finished { hints.append("q to end") }
        return "● " + ([children] + parts + (keys ? hints : [])).joined(separator: " · ")
    }

    /// The first screen, which a projector mirroring the laptop shows: the join code, link and QR code, and
    /// no key. The teacher signs in with a one-time link (used once, within minutes); the long-lived tokens
    /// are in a file only this user reads, and printed only with `--show-tokens` (then without the QR code).
    private static func printBanner(title: String, room: CreatedRoomResponse, server: ClassroomServer, saved: URL?, keys: Bool, showTokens: Bool) throws {
        Output.line("StoryCircle \(StoryCircleVersion.current) · \(title)")
        Output.line()
        Output.line("  Join code: \(room.code)")
        if showTokens {
            Output.line("  Children open \(server.publicURL) and type the code.")
        } else {
            Output.line("  Children open \(server.publicURL) and type the code, or scan:")
            Output.line()
            if let qr = JoinCode.qrTerminal(for: room.joinURL) {
                Output.line(qr.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
            }
        }
        Output.line()
        Output.line("  Join link:          \(room.joinURL)")
        if showTokens {
            Output.line("  Dashboard (board):  \(room.dashboardURL)")
            Output.line("  Teacher controls:   \(room.teacherURL)")
            if let library = try? server.libraryURL() { Output.line("  Story library:      \(library)") }
        }
        Output.line()
        Output.line(signInNote(try server.signInLink(room: room)))
        if let saved { Output.line("The room's tokens are in \(saved.path) (only you can read it); --show-tokens prints them.") }
        if keys {
            Output.line("Keys: s start · n next · r reveal · p pause/resume · k skip the story · t new sign-in link · q end the room · Ctrl-C stop")
        }
    }

    static func signInNote(_ link: String) -> String {
        "Teacher sign-in (open this on this laptop, not on the projector; it works once, for \(ClassroomServer.signInLifetimeMinutes) minutes):\n  \(link)"
    }
}

/// One status line: rewritten in place on a terminal, a new line on each change otherwise. Notes and the
/// server's log lines are printed above it: the line is cleared, the text written, the line redrawn, under
/// one lock, so a log line from another thread never lands in the middle of it.
final class StatusLine: Sendable {
    private let interactive: Bool
    /// The line as last drawn; its lock is also what keeps writes from different threads whole.
    private let last = Locked("")

    init(interactive: Bool) {
        self.interactive = interactive
    }

    func show(_ text: String) {
        last.withLock { last in
            guard text != last else { return }
            last = text
            Output.write(interactive ? "\r\u{1B}[2K" + text : text + "\n")
        }
    }

    func note(_ text: String) {
        last.withLock { last in
            Output.write(interactive ? "\r\u{1B}[2K" + text + "\n" + last : text + "\n")
        }
    }

    /// A log line, to standard error as always; on a terminal the status line makes room for it first.
    func log(_ line: String) {
        last.withLock { last in
            if interactive { Output.write("\r\u{1B}[2K") }
            StoryCircleLog.standardError(line)
            if interactive { Output.write(last) }
        }
    }

    func finish() {
        last.withLock { _ in
            if interactive { Output.write("\n") }
        }
    }
}
