import QRCode
import StoryCircleServer

/// How a room is joined from outside: its URL, and that URL as a QR code.
public enum JoinCode {
    /// The page a child opens, with the code filled in.
    public static func joinURL(publicURL: String, code: String) -> String {
        "\(publicURL)/?room=\(code)"
    }

    public static func qrSVG(for text: String) -> String? {
        try? QRCode(text: text).svg()
    }

    public static func qrTerminal(for text: String) -> String? {
        try? QRCode(text: text).terminalText()
    }
}
