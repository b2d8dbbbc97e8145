import StoryCircleCore

/// Every command's interface and the type that runs it. The help texts are compared exactly by the CLI
/// tests (`Tests/Integration/test_cli.py`, `Tests/StoryCircleCLITests`): change both together.
enum Commands {
    static let version = CommandSpec.Option(long: "version", short: nil, valueName: nil, help: "Show the version.")

    static let start = CommandSpec(
        name: "start", path: ["storycircle"],
        overview: "Start a server and a room on one story: the all-in-one classroom command.",
        arguments: [.init(name: "story", help: "The story file (JSON), or none with --story-id.", optional: true)],
        options: ServerOptions.all + RoomSettingOptions.all + [StartCommand.storyID, StartCommand.schoolClass, StartCommand.noKeys, StartCommand.showTokens, CommandSpec.helpOption],
        kind: .command(StartCommand.self),
        discussion: "Prints the join code, link and QR code (no key: the screen may be on the projector), a one-time teacher sign-in link for this computer, then a live status line.\nKeys: s start, n next, r reveal, p pause/resume, k skip the story, t a new sign-in link, q end the room (it asks first).\nWith --no-keys the terminal only shows the status; the teacher page has the controls."
    )

    static let serve = CommandSpec(
        name: "serve", path: ["storycircle"],
        overview: "Run the StoryCircle server for many rooms until stopped.",
        options: ServerOptions.all + [CommandSpec.helpOption],
        kind: .command(ServeCommand.self)
    )

    static let roomCreate = CommandSpec(
        name: "create", path: ["storycircle", "room"],
        overview: "Create a room on a running server and print its code and links.",
        arguments: [.init(name: "story", help: "The story file (JSON).")],
        options: ClientOptions.admin + RoomSettingOptions.all + [OutputOptions.json, CommandSpec.helpOption],
        kind: .command(RoomCreateCommand.self)
    )

    static let roomStatus = CommandSpec(
        name: "status", path: ["storycircle", "room"],
        overview: "Show a room's state, players and answers.",
        arguments: [.init(name: "code", help: "The room code.")],
        options: ClientOptions.teacher + [OutputOptions.json, CommandSpec.helpOption],
        kind: .command(RoomStatusCommand.self)
    )

    static let roomList = CommandSpec(
        name: "list", path: ["storycircle", "room"],
        overview: "List the rooms a server keeps.",
        options: ClientOptions.admin + [OutputOptions.json, CommandSpec.helpOption],
        kind: .command(RoomListCommand.self)
    )

    static let roomKick = CommandSpec(
        name: "kick", path: ["storycircle", "room"],
        overview: "Remove a child from a room.",
        arguments: [.init(name: "code", help: "The room code."), .init(name: "nickname", help: "The child's nickname (or player id).")],
        options: ClientOptions.teacher + [RoomKickCommand.block, CommandSpec.helpOption],
        kind: .command(RoomKickCommand.self)
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
            options: ClientOptions.teacher + [CommandSpec.helpOption],
            kind: .leaf { arguments throws(UsageError) in RoomControlCommand(command: name, arguments) }
        )
    }

    static let room = CommandSpec(
        name: "room", path: ["storycircle"],
        overview: "Create and control rooms on a running server.",
        options: [CommandSpec.helpOption],
        kind: .group([roomCreate, roomStatus, roomList] + roomCommands + [roomKick])
    )

    static let results = CommandSpec(
        name: "results", path: ["storycircle"],
        overview: "Show a room's results: each child's answers, times, points and rank.",
        arguments: [.init(name: "code", help: "The room code.")],
        options: ClientOptions.teacher + [ResultsCommand.format, CommandSpec.helpOption],
        kind: .command(ResultsCommand.self)
    )

    static let storyValidate = CommandSpec(
        name: "validate", path: ["storycircle", "story"],
        overview: "Check story files and list every problem with its place in the file.",
        arguments: [.init(name: "file", help: "Story files (JSON).", repeating: true)],
        options: [CommandSpec.helpOption],
        kind: .command(StoryValidateCommand.self),
        discussion: "Exits with 0 when every file is valid and 1 when any has an error (warnings do not count)."
    )

    static let storyList = CommandSpec(
        name: "list", path: ["storycircle", "story"],
        overview: "List the stories in a running server's library.",
        options: ClientOptions.admin + [StoryListCommand.search, OutputOptions.json, CommandSpec.helpOption],
        kind: .command(StoryListCommand.self)
    )

    static let storyPush = CommandSpec(
        name: "push", path: ["storycircle", "story"],
        overview: "Add a story file to a running server's library, or replace one of its stories.",
        arguments: [.init(name: "file", help: "The story file (JSON).")],
        options: ClientOptions.admin + [StoryPushCommand.id, StoryPushCommand.basedOn, CommandSpec.helpOption],
        kind: .command(StoryPushCommand.self),
        discussion: "The server checks it first, as 'story validate' does, and lists every problem; nothing is saved then.\nA story changed since the version it was based on is not replaced."
    )

    static let storyPull = CommandSpec(
        name: "pull", path: ["storycircle", "story"],
        overview: "Print a story of a running server's library as a story file.",
        arguments: [.init(name: "id", help: "The story's id (from 'story list').")],
        options: ClientOptions.admin + [StoryPullCommand.out, CommandSpec.helpOption],
        kind: .command(StoryPullCommand.self)
    )

    static let story = CommandSpec(
        name: "story", path: ["storycircle"],
        overview: "Work with story files and a server's story library.",
        options: [CommandSpec.helpOption],
        kind: .group([storyValidate, storyList, storyPush, storyPull])
    )

    static let classCreate = CommandSpec(
        name: "create", path: ["storycircle", "class"],
        overview: "Add a class to a running server: its name and its children, each with a picture.",
        arguments: [.init(name: "name", help: "The class's name (1 to 60 characters).")],
        options: ClientOptions.admin + [ClassCreateCommand.child, ClassCreateCommand.from, CommandSpec.helpOption],
        kind: .command(ClassCreateCommand.self),
        discussion: "A child is NAME or NAME:PICTURE; the pictures are \(ClassRules.avatars.joined(separator: " ")), or emoji:🦊.\nFILE is JSON {\"children\": [{\"name\": \"Ada\", \"avatar\": \"owl\"}]} or one name per line.\nA class has at most \(ClassRules.maximumChildren) children, and no two whose names look the same."
    )

    static let classList = CommandSpec(
        name: "list", path: ["storycircle", "class"],
        overview: "List the classes of a running server.",
        options: ClientOptions.admin + [OutputOptions.json, CommandSpec.helpOption],
        kind: .command(ClassListCommand.self)
    )

    static let classShow = CommandSpec(
        name: "show", path: ["storycircle", "class"],
        overview: "Show a class's children with their pictures.",
        arguments: [.init(name: "class", help: "The class's name or id.")],
        options: ClientOptions.admin + [OutputOptions.json, CommandSpec.helpOption],
        kind: .command(ClassShowCommand.self)
    )

    static let classAdd = CommandSpec(
        name: "add", path: ["storycircle", "class"],
        overview: "Add a child to a class.",
        arguments: [.init(name: "class", help: "The class's name or id."), .init(name: "child", help: "The child's name.")],
        options: ClientOptions.admin + [ClassAddCommand.avatar, CommandSpec.helpOption],
        kind: .command(ClassAddCommand.self)
    )

    static let classRemove = CommandSpec(
        name: "remove", path: ["storycircle", "class"],
        overview: "Take a child out of a class (their past results stay in the rooms they played).",
        arguments: [.init(name: "class", help: "The class's name or id."), .init(name: "child", help: "The child's name.")],
        options: ClientOptions.admin + [CommandSpec.helpOption],
        kind: .command(ClassRemoveCommand.self)
    )

    static let classErase = CommandSpec(
        name: "erase", path: ["storycircle", "class"],
        overview: "Delete everything of one child of a class, in every room: it cannot be undone.",
        arguments: [.init(name: "class", help: "The class's name or id."), .init(name: "child", help: "The child's name.")],
        options: ClientOptions.admin + [ClassEraseCommand.yes, CommandSpec.helpOption],
        kind: .command(ClassEraseCommand.self),
        discussion: "Without --yes it says what would be deleted and deletes nothing."
    )

    static let schoolClass = CommandSpec(
        name: "class", path: ["storycircle"],
        overview: "Keep a server's classes: children join a class's rooms by tapping their name.",
        options: [CommandSpec.helpOption],
        kind: .group([classCreate, classList, classShow, classAdd, classRemove, classErase])
    )

    static let childExport = CommandSpec(
        name: "export", path: ["storycircle", "child"],
        overview: "Everything stored about one child, as JSON or CSV: for a parent who asks.",
        arguments: [.init(name: "class-or-room", help: "A class's name or id, or a room code."), .init(name: "child", help: "The child's name in the class, or their nickname or player id in the room.")],
        options: [ClientOptions.server, ClientOptions.caFile, ClientOptions.token, ClientOptions.adminToken, ChildExportCommand.csv, ChildExportCommand.out, CommandSpec.helpOption],
        kind: .command(ChildExportCommand.self),
        discussion: "A class's child: every room of the class and their place in it (the admin token).\nA room's child: that room (its teacher token, else the admin token). docs/privacy.md says how to answer a parent."
    )

    static let childErase = CommandSpec(
        name: "erase", path: ["storycircle", "child"],
        overview: "Delete everything stored about one child: it cannot be undone.",
        arguments: [.init(name: "class-or-room", help: "A class's name or id, or a room code."), .init(name: "child", help: "The child's name in the class, or their nickname or player id in the room.")],
        options: [ClientOptions.server, ClientOptions.caFile, ClientOptions.token, ClientOptions.adminToken, ClassEraseCommand.yes, CommandSpec.helpOption],
        kind: .command(ChildEraseCommand.self),
        discussion: "Without --yes it says what would be deleted and deletes nothing. A room that has not finished is refused: end it first."
    )

    static let child = CommandSpec(
        name: "child", path: ["storycircle"],
        overview: "One child's data on a parent's request: export it, then erase it.",
        options: [CommandSpec.helpOption],
        kind: .group([childExport, childErase])
    )

    static let accountAdopt = CommandSpec(
        name: "adopt", path: ["storycircle", "account"],
        overview: "Make a teacher the owner of every class, room, story and picture stored before accounts.",
        arguments: [.init(name: "login", help: "The login of the teacher (or school administrator) who owns them from now on.")],
        options: ClientOptions.admin + [OutputOptions.json, CommandSpec.helpOption],
        kind: .command(AccountAdoptCommand.self),
        discussion: "What already has an owner keeps it, so running it again changes nothing. Their school sees them too."
    )

    static let account = CommandSpec(
        name: "account", path: ["storycircle"],
        overview: "Keep the adults' accounts of a running server.",
        options: [CommandSpec.helpOption],
        kind: .group([accountAdd, accountList, accountDisable, accountEnable, accountReset, accountAdopt])
    )

    static let voices = CommandSpec(
        name: "voices", path: ["storycircle"],
        overview: "List the voices this computer can read stories with (natural and espeak-ng).",
        options: [ServerOptions.config, VoicesCommand.json, VoicesCommand.say, VoicesCommand.voice, VoicesCommand.out, CommandSpec.helpOption],
        kind: .command(VoicesCommand.self),
        discussion: "A story chooses one with \"voice\" in its narration: \"piper:en_US-joe-medium\" or \"en-gb\".\nNatural voices are Piper voices (NAME.onnx and NAME.onnx.json) in voicesDirectory or installed with Piper."
    )

    static let audit = CommandSpec(
        name: "audit", path: ["storycircle"],
        overview: "Show who read, exported or erased children's data on a running server, newest first.",
        options: ClientOptions.admin + [AuditCommand.since, AuditCommand.until, AuditCommand.action, AuditCommand.limit, AuditCommand.csv, OutputOptions.json, CommandSpec.helpOption],
        kind: .command(AuditCommand.self),
        discussion: "Every read of a room's results, a class's report or CSV and every erasure leaves a row.\nNo row names a token (docs/operations.md, \"Audit trail\")."
    )

    static let tlsInit = CommandSpec(
        name: "init", path: ["storycircle", "tls"],
        overview: "Make this laptop's certificate authority (once) and a server certificate for its addresses.",
        options: [ServerOptions.config, TLSInitCommand.data, TLSInitCommand.name, TLSInitCommand.address, TLSInitCommand.force, CommandSpec.helpOption],
        kind: .command(TLSInitCommand.self),
        discussion: "Writes <data>/tls/ca.crt, ca.key, server.crt and server.key; 'serve' and 'start' then speak HTTPS with them.\nThe certificate is for this laptop's host name, NAME.local, localhost, 127.0.0.1, ::1 and every address of its\nnetwork interfaces. Run it again when the address changes: the authority is kept, so devices that trust it\nkeep trusting. Devices trust ca.crt once (docs/operations.md, \"HTTPS on one laptop\")."
    )

    static let tls = CommandSpec(
        name: "tls", path: ["storycircle"],
        overview: "HTTPS for children's devices: this laptop's own certificates.",
        options: [CommandSpec.helpOption],
        kind: .group([tlsInit])
    )

    static let root = CommandSpec(
        name: "storycircle", path: [],
        overview: "Live story-and-quiz rooms for a classroom, from one computer.",
        options: [version, CommandSpec.helpOption],
        kind: .group([start, serve, room, results, story, schoolClass, account, school, roster, child, audit, voices, tls])
    )
}
