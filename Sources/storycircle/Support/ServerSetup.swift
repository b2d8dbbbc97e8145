import Foundation
import StoryCircleServer

/// The server configuration for `serve` and `start`: the file, the environment, then the flags.
enum ServerSetup {
    static let defaultConfigFile = "config/storycircle.json"

    static func configuration(_ parsed: ParsedArguments, spec: CommandSpec) throws(UsageError) -> Result<ServerConfiguration, CommandFailure> {
        let explicit = parsed.value("config")
        let file = explicit ?? (FileManager.default.fileExists(atPath: defaultConfigFile) ? defaultConfigFile : nil)
        var configuration: ServerConfiguration
        do {
            configuration = try ServerConfiguration.load(file: file)
        } catch {
            return .failure(CommandFailure("configuration: \(error.description)"))
        }
        if let port = parsed.value("port") {
            guard let value = Int(port), (0...65_535).contains(value) else {
                throw UsageError(message: "The value '\(port)' is invalid for '--port <port>': use a port number from 0 to 65535.", spec: spec)
            }
            configuration.port = value
        }
        if let data = parsed.value("data") {
            configuration.dataDirectory = data
            configuration.database = data + "/storycircle.sqlite"
            configuration.audioCacheDirectory = data + "/audio-cache"
        }
        if let database = parsed.value("database") { configuration.database = database }
        return .success(configuration)
    }

    /// Starts a server, turning whatever stops it into one line for the teacher.
    static func start(_ configuration: ServerConfiguration, logger: Logger? = nil) async throws(CommandFailure) -> ClassroomServer {
        do {
            return try await ClassroomServer.start(configuration: configuration, logger: logger)
        } catch {
            throw CommandFailure("the server could not start: \(error)")
        }
    }
}
