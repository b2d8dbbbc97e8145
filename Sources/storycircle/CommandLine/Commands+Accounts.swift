import StoryCircleCore

/// The account and school commands' interfaces (their help texts are in Tests/Integration/cli_help).
extension Commands {
    static let accountAdd = CommandSpec(
        name: "add", path: ["storycircle", "account"],
        overview: "Add a teacher's or an administrator's account to a running server.",
        arguments: [.init(name: "login", help: "What they sign in with: letters, digits and . - _ @ + (an email address works).")],
        options: ClientOptions.admin + [AccountAddCommand.name, AccountAddCommand.role, AccountAddCommand.school, AccountAddCommand.passwordStdin, OutputOptions.json, CommandSpec.helpOption],
        kind: .command(AccountAddCommand.self),
        discussion: "Without --password-stdin it prints a one-time link (24 hours) where they set their own password.\nExample: printf '%s' \"$PASSWORD\" | storycircle account add ana --name 'Ana López' --school 'North Primary' --password-stdin"
    )

    static let accountList = CommandSpec(
        name: "list", path: ["storycircle", "account"],
        overview: "List the accounts of a running server.",
        options: ClientOptions.admin + [AccountListCommand.school, OutputOptions.json, CommandSpec.helpOption],
        kind: .command(AccountListCommand.self)
    )

    static let accountDisable = CommandSpec(
        name: "disable", path: ["storycircle", "account"],
        overview: "Stop an account from signing in, and sign it out everywhere at once.",
        arguments: [.init(name: "login", help: "The account's login or id.")],
        options: ClientOptions.admin + [CommandSpec.helpOption],
        kind: .leaf { arguments throws(UsageError) in AccountEnableCommand(enable: false, arguments) }
    )

    static let accountEnable = CommandSpec(
        name: "enable", path: ["storycircle", "account"],
        overview: "Let a disabled account sign in again.",
        arguments: [.init(name: "login", help: "The account's login or id.")],
        options: ClientOptions.admin + [CommandSpec.helpOption],
        kind: .leaf { arguments throws(UsageError) in AccountEnableCommand(enable: true, arguments) }
    )

    static let accountReset = CommandSpec(
        name: "reset", path: ["storycircle", "account"],
        overview: "End an account's password and sessions, and print a one-time link to set a new password.",
        arguments: [.init(name: "login", help: "The account's login or id.")],
        options: ClientOptions.admin + [CommandSpec.helpOption],
        kind: .command(AccountResetCommand.self),
        discussion: "The link works once, for 24 hours; a newer reset replaces it. Give it to the person, not to anyone else."
    )

    static let schoolAdd = CommandSpec(
        name: "add", path: ["storycircle", "school"],
        overview: "Add a school to a running server.",
        arguments: [.init(name: "name", help: "The school's name (1 to 80 characters; no two schools share one).")],
        options: ClientOptions.admin + [OutputOptions.json, CommandSpec.helpOption],
        kind: .command(SchoolAddCommand.self)
    )

    static let schoolList = CommandSpec(
        name: "list", path: ["storycircle", "school"],
        overview: "List the schools of a running server.",
        options: ClientOptions.admin + [OutputOptions.json, CommandSpec.helpOption],
        kind: .command(SchoolListCommand.self)
    )

    static let schoolRetention = CommandSpec(
        name: "retention", path: ["storycircle", "school"],
        overview: "Show a school's retention rules, or change some of them.",
        arguments: [.init(name: "school", help: "The school's name or id.")],
        options: ClientOptions.admin + SchoolRetentionCommand.options.map(\.option) + [OutputOptions.json, CommandSpec.helpOption],
        kind: .command(SchoolRetentionCommand.self),
        discussion: "Rules not given keep their value; 'default' gives one back to the server's configuration.\nExample: storycircle school retention 'North Primary' --rooms 14 --audit default"
    )

    static let rosterImport = CommandSpec(
        name: "import", path: ["storycircle", "roster"],
        overview: "Make and update schools, teachers and classes from a OneRoster 1.2 CSV export.",
        arguments: [.init(name: "folder-or-zip", help: "The export: its folder or ZIP file, with manifest.csv, orgs.csv, users.csv, classes.csv, enrollments.csv, …")],
        options: ClientOptions.admin + [RosterImportCommand.check, OutputOptions.json, CommandSpec.helpOption],
        kind: .command(RosterImportCommand.self),
        discussion: "Every bad row is listed with its file, line and column, and then nothing is imported.\nImporting a newer export again changes the classes in place; children who left keep their past results."
    )

    static let roster = CommandSpec(
        name: "roster", path: ["storycircle"],
        overview: "Take classes from the school's roster (OneRoster CSV, as ClassLink and Clever export it).",
        options: [CommandSpec.helpOption],
        kind: .group([rosterImport])
    )

    static let school = CommandSpec(
        name: "school", path: ["storycircle"],
        overview: "Keep the schools a server's accounts belong to.",
        options: [CommandSpec.helpOption],
        kind: .group([schoolAdd, schoolList, schoolRetention])
    )
}
