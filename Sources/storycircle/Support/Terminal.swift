import Foundation
import Glibc

/// The teacher's terminal: single-key input without Enter, restored on exit.
final class Terminal: @unchecked Sendable {
    // `@unchecked Sendable`: `saved` is written once in `init` and only read in `restore`.
    private var saved = termios()

    static var inputIsInteractive: Bool { isatty(STDIN_FILENO) == 1 }
    static var outputIsInteractive: Bool { isatty(STDOUT_FILENO) == 1 }

    /// Switches the terminal to read keys one at a time without echo (Ctrl-C still interrupts).
    init?() {
        guard Self.inputIsInteractive, tcgetattr(STDIN_FILENO, &saved) == 0 else { return nil }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { bytes in
            bytes[Int(VMIN)] = 1
            bytes[Int(VTIME)] = 0
        }
        tcsetattr(STDIN_FILENO, TCSANOW, &raw)
    }

    func restore() {
        tcsetattr(STDIN_FILENO, TCSANOW, &saved)
    }

    /// Bytes typed on standard input, read on a thread of their own (reading blocks). Works for a pipe
    /// too, so a script can drive `start` by writing letters.
    static func keys() -> AsyncStream<UInt8> {
        AsyncStream { continuation in
            let thread = Thread {
                var byte: UInt8 = 0
                while read(STDIN_FILENO, &byte, 1) == 1 {
                    continuation.yield(byte)
                }
                continuation.finish()
            }
            thread.name = "keys"
            thread.start()
        }
    }
}
