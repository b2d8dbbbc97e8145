import StoryCircleCore
import StoryCircleApp
import StoryCircleServer

/// `serve`: a server for many rooms, until SIGINT or SIGTERM.
struct ServeCommand: ParsableCommand {
    var serverOptions: ServerOptions

    init(_ arguments: ParsedArguments) throws(UsageError) {
        serverOptions = try ServerOptions(arguments)
    }

    func run() async throws -> Int32 {
        let configuration = try serverOptions.configuration()
        let signals = Signals.stream()
        let hangUps = Signals.hangUps()
        let log = configuration.log()
        log.takeLibWebSocketsLines()
        let server = try await ServerOptions.start(configuration, logger: log)
        Output.line("StoryCircle \(StoryCircleVersion.current) listening on \(server.publicURL) (port \(server.port))")
        if let file = server.adminTokenFile {
            Output.line("Admin token: in \(file) (the CLI reads it from there; HTTP clients send it as 'Authorization: Bearer …')")
        }
        // Under systemd or Docker stdout is the log, which must never hold a token: the link carries it only
        // when a person is reading a terminal.
        if Terminal.outputIsInteractive, let library = try? server.libraryURL() {
            Output.line("Story library: \(library)")
        } else if let page = server.libraryPageURL {
            let kept = server.adminTokenFile.map { " in \($0)" } ?? ""
            Output.line("Story library: \(page) (open it as \(page)#token=<the admin token\(kept)>)")
        }
        if server.restoredRooms > 0 {
            Output.line("Restored \(server.restoredRooms) unfinished room\(server.restoredRooms == 1 ? "" : "s"): children can rejoin where they were.")
        }
        Output.line("Press Ctrl-C to stop.")
        let onTerminal = Terminal.outputIsInteractive
        let (stops, stop) = AsyncStream.makeStream(of: Void.self)
        let forwarders = [
            Task { for await _ in signals { stop.yield() } },
            Task {
                for await _ in hangUps {
                    if Signals.terminalHungUp(outputWasTerminal: onTerminal) { stop.yield() } else { await server.reloadCertificate() }
                }
            },
        ]
        for await _ in stops { break }
        forwarders.forEach { $0.cancel() }
        Output.line("Stopping…")
        await server.stop()
        Output.line("Stopped.")
        return ExitCode.success
    }
}
