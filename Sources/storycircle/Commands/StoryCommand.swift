import Foundation
import StoryCircleCore

/// `story validate FILE...`: every problem in every file; exit 1 if any file has an error.
struct StoryValidateCommand: ParsableCommand {
    var files: [String]

    init(_ arguments: ParsedArguments) {
        files = arguments.positional
    }

    func run() async -> Int32 {
        var allValid = true
        for path in files {
            let result = StoryFile.load(path)
            for issue in result.issues {
                let line = "\(path): \(issue.severity == .warning ? "warning: " : "")\(issue)"
                if issue.severity == .error { FileHandle.standardError.write(Data((line + "\n").utf8)) } else { Output.line(line) }
            }
            if let story = result.value {
                Output.line("\(path): valid: \"\(story.title)\", \(story.sentences.count) sentences, \(story.quiz.questions.count) question\(story.quiz.questions.count == 1 ? "" : "s")")
            } else {
                allValid = false
                Output.line("\(path): invalid: \(result.errors.count) error\(result.errors.count == 1 ? "" : "s")")
            }
        }
        return allValid ? ExitCode.success : ExitCode.failure
    }
}
