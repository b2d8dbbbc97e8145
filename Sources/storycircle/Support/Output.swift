import Foundation

/// Where the CLI writes: results to stdout, problems to stderr as `Error: …`.
enum Output {
    static func line(_ text: String = "") {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    static func error(_ message: String) {
        FileHandle.standardError.write(Data("Error: \(message)\n".utf8))
    }

    static func warning(_ message: String) {
        FileHandle.standardError.write(Data("Warning: \(message)\n".utf8))
    }

    /// Prints a usage error the way swift-argument-parser does; the caller exits with `ExitCode.usage`.
    static func usageError(_ message: String, spec: CommandSpec) {
        FileHandle.standardError.write(Data("Error: \(message)\nUsage: \(spec.usage)\n  See '\(spec.fullName) --help' for more information.\n".utf8))
    }
}

/// Exit codes, as sysexits.h has them.
enum ExitCode {
    static let success: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 64
}

/// A failure to report as one line and exit 1.
struct CommandFailure: Error {
    var message: String
    init(_ message: String) { self.message = message }
}
