import Foundation
import StoryCircleCore
import StoryCircleServer

/// `storycircle start STORY.json`: a server and one room, for a teacher who stays in the terminal.
enum StartCommand {
    private enum Event {
        case key(UInt8)
        case tick
        case signal
    }

    static func run(_ parsed: ParsedArguments) async throws -> Int32 {
        // Flags first: a usage error is reported as one, whatever else is wrong.
        let patch = try RoomSettingFlags.patch(parsed, spec: Commands.start)
        let configuration = try ServerSetup.configuration(parsed, spec: Commands.start).get()
        let story = try StoryFile.require(parsed.positional[0])
        let signals = Signals.stream()
        let server = try await ServerSetup.start(configuration)
        let created = try await server.createRoom(story: story, settings: patch)
        guard let room = await server.registry.room(created.room.code) else {
            await server.stop()
            throw CommandFailure("the room disappeared as it was created")
        }
        printBanner(title: story.title, code: created.room.code, joinURL: created.joinURL, dashboardURL: created.dashboardURL, teacherURL: created.teacherURL, server: server)

        let (events, sink) = AsyncStream.makeStream(of: Event.self)
        let forwarders = [
            Task { for await _ in signals { sink.yield(.signal) } },
            Task {
                while !Task.isCancelled {
                    sink.yield(.tick)
                    try? await Task.sleep(for: .milliseconds(400))
                }
            },
        ]
        let readsKeys = !parsed.has("no-keys")
        let terminal = readsKeys ? Terminal() : nil
        if readsKeys {
            Task { for await key in Terminal.keys() { sink.yield(.key(key)) } }
        }
        let status = StatusLine(interactive: Terminal.outputIsInteractive)

        loop: for await event in events {
            switch event {
            case .signal:
                break loop
            case .tick:
                status.show(describe(await room.report()))
            case .key(let key):
                guard let command = command(for: key, report: await room.report()) else {
                    if key == UInt8(ascii: "q") {
                        _ = try? await room.perform(.end)
                        status.note("The room has ended. Goodbye!")
                        break loop
                    }
                    continue
                }
                do {
                    _ = try await room.perform(command)
                    status.note("→ \(command.name)")
                } catch {
                    status.note("Cannot \(command.name) now: \(error.message)")
                }
                status.show(describe(await room.report()))
            }
        }
        forwarders.forEach { $0.cancel() }
        terminal?.restore()
        status.finish()
        Output.line("Stopping the server…")
        await server.stop()
        Output.line("Results stay available: storycircle results \(created.room.code) --token \(created.room.teacherToken) (while a server runs on this data folder).")
        return ExitCode.success
    }

    private static func command(for key: UInt8, report: RoomReport) -> TeacherCommand? {
        switch key {
        case UInt8(ascii: "s"): report.phase == .error ? .retry : .start
        case UInt8(ascii: "n"): .next
        case UInt8(ascii: "r"): .reveal
        case UInt8(ascii: "p"): report.paused ? .resume : .pause
        default: nil
        }
    }

    static func describe(_ report: RoomReport) -> String {
        let children = "\(report.players) child\(report.players == 1 ? "" : "ren") (\(report.connectedPlayers) here)"
        let state: String
        switch report.phase {
        case .lobby: state = "waiting · press s to start"
        case .preparing: state = "preparing the story…"
        case .error: state = "narration failed: \(report.errorMessage ?? "") · press s to try again, n… or skip from the teacher page"
        case .narrating: state = report.paused ? "story paused · p to resume" : "telling the story · p to pause"
        case .question:
            let number = (report.question ?? 0) + 1
            state = "question \(number)/\(report.questionCount) · \(report.answers ?? 0)/\(report.players) answered" + (report.paused ? " · paused" : "") + " · r to reveal"
        case .reveal:
            let number = (report.question ?? 0) + 1
            state = "answer \(number)/\(report.questionCount) revealed · n for " + (number == report.questionCount ? "the podium" : "the next question")
        case .finished: state = "finished · q to quit"
        }
        return "● \(children) · \(state)"
    }

    private static func printBanner(title: String, code: String, joinURL: String, dashboardURL: String, teacherURL: String, server: ClassroomServer) {
        Output.line("StoryCircle \(StoryCircleVersion.current) · \(title)")
        Output.line()
        Output.line("  Join code: \(code)")
        Output.line("  Children open \(server.publicURL) and type the code, or scan:")
        Output.line()
        if let qr = JoinCode.qrTerminal(for: joinURL) {
            Output.line(qr.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
        }
        Output.line()
        Output.line("  Join link:          \(joinURL)")
        Output.line("  Dashboard (board):  \(dashboardURL)")
        Output.line("  Teacher controls:   \(teacherURL)")
        Output.line()
        Output.line("Keys: s start · n next · r reveal · p pause/resume · q end and quit · Ctrl-C stop")
    }
}

/// One status line: rewritten in place on a terminal, a new line on each change otherwise.
final class StatusLine: @unchecked Sendable {
    // `@unchecked Sendable`: used only from the command's event loop.
    private let interactive: Bool
    private var last = ""

    init(interactive: Bool) {
        self.interactive = interactive
    }

    func show(_ text: String) {
        guard text != last else { return }
        last = text
        Output.write(interactive ? "\r\u{1B}[2K" + text : text + "\n")
    }

    func note(_ text: String) {
        Output.write(interactive ? "\r\u{1B}[2K" + text + "\n" + last : text + "\n")
    }

    func finish() {
        if interactive { Output.write("\n") }
    }
}
