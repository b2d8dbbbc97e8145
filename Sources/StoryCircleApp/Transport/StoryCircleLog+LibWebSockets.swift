import StoryCircleServer
import WebSocketTransport

extension StoryCircleLog {
    /// Makes libwebsockets' own lines this log's, for the rest of the process: the program's choice, made
    /// once (`serve`, `start`), as lws has one log for the whole process. Each line is logged with a
    /// constant message and lws's text in `lws.line`. (The transport hands its lines to a plain callback;
    /// the bridge to the server's log is the composition's, so the rooms' log knows no C library.)
    public func takeLibWebSocketsLines() {
        LibWebSocketsLog.route { level, line in
            switch level {
            case .error: error("libwebsockets reported an error", ["lws.line": line])
            case .warning: warning("libwebsockets reported a warning", ["lws.line": line])
            case .notice, .other: notice("libwebsockets reported a notice", ["lws.line": line])
            }
        }
    }
}
