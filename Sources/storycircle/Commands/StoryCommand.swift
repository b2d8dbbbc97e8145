import Foundation
import StoryCircleApp
import StoryCircleCore

/// `story validate FILE...`: every problem in every file; exit 1 if any file has an error.
struct StoryValidateCommand: ParsableCommand {
    var files: [String]

    init(_ arguments: ParsedArguments) {
        files = arguments.positional
    }

    func run() async -> Int32 {
        var allValid = true
        // The voices of this computer, as `serve` would find them (config/storycircle.json and the
        // environment): a story whose voice is not installed here is refused, with the list.
        var catalog: VoiceCatalog?
        for path in files {
            let result = StoryFile.load(path)
            for issue in result.issues {
                let line = "\(path): \(issue.severity == .warning ? "warning: " : "")\(issue)"
                if issue.severity == .error { FileHandle.standardError.write(Data((line + "\n").utf8)) } else { Output.line(line) }
            }
            if let story = result.value {
                // The pictures, checked as the server will check them (a file missing, not a picture, too big).
                let pictureProblems = if let document = StoryFile.document(path) { await StoryPictures.problems(document: document, storyPath: path) } else { [ValidationIssue]() }
                for issue in pictureProblems {
                    FileHandle.standardError.write(Data("\(path): \(issue)\n".utf8))
                }
                if !pictureProblems.isEmpty {
                    Output.line("\(path): invalid: \(pictureProblems.count) error\(pictureProblems.count == 1 ? "" : "s")")
                    allValid = false
                    continue
                }
                if catalog == nil, let configuration = try? VoicesCommand.configuration(file: nil) {
                    catalog = await VoicesCommand.catalog(configuration)
                }
                if let catalog, case .failure(let refusal) = catalog.choose(story.narration.voice) {
                    FileHandle.standardError.write(Data("\(path): narration.voice: \(refusal)\n".utf8))
                    Output.line("\(path): invalid: 1 error")
                    allValid = false
                    continue
                }
                let pictures = story.pictureReferences.count
                let pictureNote = pictures == 0 ? "" : ", \(pictures) picture\(pictures == 1 ? "" : "s")"
                Output.line("\(path): valid: \"\(story.title)\", \(story.sentences.count) sentences, \(story.quiz.questions.count) question\(story.quiz.questions.count == 1 ? "" : "s")\(pictureNote)")
            } else {
                allValid = false
                Output.line("\(path): invalid: \(result.errors.count) error\(result.errors.count == 1 ? "" : "s")")
            }
        }
        return allValid ? ExitCode.success : ExitCode.failure
    }
}
