/// Every command's interface. The help texts are compared exactly by the CLI tests
/// (`Tests/Integration/test_cli.py`): change both together.
enum Commands {
    static let version = CommandSpec.Option(long: "version", short: nil, valueName: nil, help: "Show the version.")

    static let roomSettingOptions: [CommandSpec.Option] = [
        .init(long: "narrate", valueName: "mode", help: "Where the story is read aloud: devices, dashboard or off.", defaultValue: "devices"),
        .init(long: "no-speed-points", valueName: nil, help: "Every correct answer scores the same, however fast."),
        .init(long: "no-streaks", valueName: nil, help: "No bonus for correct answers in a row."),
        .init(long: "no-timer", valueName: nil, help: "Questions stay open until everyone answers or you reveal."),
        .init(long: "question-seconds", valueName: "seconds", help: "Time for questions that set none.", defaultValue: "20"),
        .init(long: "no-late-join", valueName: nil, help: "Children cannot join after the story starts."),
        .init(long: "read-questions", valueName: nil, help: "Read each question and its options aloud too."),
        .init(long: "voice", valueName: "voice", help: "An espeak-ng voice instead of the story's (en, en-gb, es, ...)."),
    ]

    static let clientOptions: [CommandSpec.Option] = [
        .init(long: "server", valueName: "url", help: "The server to talk to (or STORYCIRCLE_SERVER).", defaultValue: "http://127.0.0.1:8080"),
        .init(long: "token", valueName: "token", help: "The room's teacher token (or STORYCIRCLE_TOKEN; by default the one saved by 'room create')."),
    ]

    static let serverOptions: [CommandSpec.Option] = [
        .init(long: "config", valueName: "file", help: "The configuration file.", defaultValue: "config/storycircle.json"),
        .init(long: "port", valueName: "port", help: "The port to listen on.", defaultValue: "8080"),
        .init(long: "data", valueName: "directory", help: "Where the database, audio cache and admin token live.", defaultValue: "data"),
        .init(long: "database", valueName: "path", help: "The SQLite file, or 'none' to keep nothing on disk.", defaultValue: "<data>/storycircle.sqlite"),
    ]

    static let start = CommandSpec(
        name: "start", path: ["storycircle"],
        overview: "Start a server and a room on one story: the all-in-one classroom command.",
        arguments: [.init(name: "story", help: "The story file (JSON).")],
        options: serverOptions + roomSettingOptions + [
            .init(long: "no-keys", valueName: nil, help: "Do not read single-key controls from the terminal (and show no key hints)."),
            CommandSpec.helpOption,
        ],
        discussion: "Prints the join code, a QR code and the dashboard and teacher links, then a live status line.\nKeys: s start, n next, r reveal, p pause/resume, k skip the story, q end the room (it asks first).\nWith --no-keys the terminal only shows the status; the teacher page has the controls."
    )

    static let serve = CommandSpec(
        name: "serve", path: ["storycircle"],
        overview: "Run the StoryCircle server for many rooms until stopped.",
        options: serverOptions + [CommandSpec.helpOption]
    )

    static let roomCreate = CommandSpec(
        name: "create", path: ["storycircle", "room"],
        overview: "Create a room on a running server and print its code and links.",
        arguments: [.init(name: "story", help: "The story file (JSON).")],
        options: [clientOptions[0], .init(long: "admin-token", valueName: "token", help: "The server's admin token (or STORYCIRCLE_ADMIN_TOKEN, or data/admin-token).")]
            + roomSettingOptions + [.init(long: "json", valueName: nil, help: "Print JSON for scripts."), CommandSpec.helpOption]
    )

    static let roomStatus = CommandSpec(
        name: "status", path: ["storycircle", "room"],
        overview: "Show a room's state, players and answers.",
        arguments: [.init(name: "code", help: "The room code.")],
        options: clientOptions + [.init(long: "json", valueName: nil, help: "Print JSON for scripts."), CommandSpec.helpOption]
    )

    static let roomList = CommandSpec(
        name: "list", path: ["storycircle", "room"],
        overview: "List the rooms a server keeps.",
        options: [clientOptions[0], .init(long: "admin-token", valueName: "token", help: "The server's admin token (or STORYCIRCLE_ADMIN_TOKEN, or data/admin-token)."),
                  .init(long: "json", valueName: nil, help: "Print JSON for scripts."), CommandSpec.helpOption]
    )

    static let roomKick = CommandSpec(
        name: "kick", path: ["storycircle", "room"],
        overview: "Remove a child from a room.",
        arguments: [.init(name: "code", help: "The room code."), .init(name: "nickname", help: "The child's nickname (or player id).")],
        options: clientOptions + [
            .init(long: "block", valueName: nil, help: "Also block: that name and that browser cannot join this room again."),
            CommandSpec.helpOption,
        ]
    )

    static let roomCommandOverviews: [(String, String)] = [
        ("start", "Start the story."),
        ("next", "Go to the next question (or reveal the open one)."),
        ("reveal", "Reveal the open question's answer now."),
        ("pause", "Pause the story or the question timer."),
        ("resume", "Resume after a pause."),
        ("end", "End the room and show the podium."),
    ]

    static let roomCommands: [CommandSpec] = roomCommandOverviews.map { name, overview in
        CommandSpec(
            name: name, path: ["storycircle", "room"], overview: overview,
            arguments: [.init(name: "code", help: "The room code.")],
            options: clientOptions + [CommandSpec.helpOption]
        )
    }

    static let room = CommandSpec(
        name: "room", path: ["storycircle"],
        overview: "Create and control rooms on a running server.",
        options: [CommandSpec.helpOption],
        subcommands: [roomCreate, roomStatus, roomList] + roomCommands + [roomKick]
    )

    static let results = CommandSpec(
        name: "results", path: ["storycircle"],
        overview: "Show a room's results: each child's answers, times, points and rank.",
        arguments: [.init(name: "code", help: "The room code.")],
        options: clientOptions + [.init(long: "format", valueName: "format", help: "table, csv or json.", defaultValue: "table"), CommandSpec.helpOption]
    )

    static let storyValidate = CommandSpec(
        name: "validate", path: ["storycircle", "story"],
        overview: "Check story files and list every problem with its place in the file.",
        arguments: [.init(name: "file", help: "Story files (JSON).", repeating: true)],
        options: [CommandSpec.helpOption],
        discussion: "Exits with 0 when every file is valid and 1 when any has an error (warnings do not count)."
    )

    static let story = CommandSpec(
        name: "story", path: ["storycircle"],
        overview: "Work with story files.",
        options: [CommandSpec.helpOption],
        subcommands: [storyValidate]
    )

    static let root = CommandSpec(
        name: "storycircle", path: [],
        overview: "Live story-and-quiz rooms for a classroom, from one computer.",
        options: [version, CommandSpec.helpOption],
        subcommands: [start, serve, room, results, story]
    )
}
