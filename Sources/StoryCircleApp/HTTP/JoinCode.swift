import QRCode
import StoryCircleServer

/// How a room is joined from outside: its URL, and that URL as a QR code.
public enum JoinCode {
    /// The page a child opens, with the code filled in and the room's language, so that the very first
    /// screen (before the child has joined and been told the room's language) speaks it.
    public static func joinURL(publicURL: String, code: String, language: String) -> String {
        "\(publicURL)/?room=\(code)&lang=\(language)"
    }

    public static func qrSVG(for text: String) -> String? {
        try? QRCode(text: text).svg()
    }

    public static func qrTerminal(for text: String) -> String? {
        try? QRCode(text: text).terminalText()
    }
}
