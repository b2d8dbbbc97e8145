import Foundation
import Glibc
import Locking

/// The teacher's terminal: single-key input without Enter, restored on exit.
final class Terminal {
    private let saved: termios

    static var inputIsInteractive: Bool { isatty(STDIN_FILENO) == 1 }
    static var outputIsInteractive: Bool { isatty(STDOUT_FILENO) == 1 }

    /// Switches the terminal to read keys one at a time without echo (Ctrl-C still interrupts).
    init?() {
        var saved = termios()
        guard Self.inputIsInteractive, tcgetattr(STDIN_FILENO, &saved) == 0 else { return nil }
        self.saved = saved
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { bytes in
            bytes[Int(VMIN)] = 1
            bytes[Int(VTIME)] = 0
        }
        tcsetattr(STDIN_FILENO, TCSANOW, &raw)
    }

    func restore() {
        var saved = saved
        tcsetattr(STDIN_FILENO, TCSANOW, &saved)
    }

    /// Bytes typed on `input` (standard input), read on a thread of their own because reading blocks.
    /// Works for a pipe too, so a script can drive `start` by writing letters. The thread ends when the
    /// input does or when the stream's consumer goes away (its task cancelled): it waits in `poll` on the
    /// input and on a pipe of its own that the stream's end writes to. `whenStopped` runs as it ends.
    static func keys(from input: Int32 = STDIN_FILENO, whenStopped: @escaping @Sendable () -> Void = {}) -> AsyncStream<UInt8> {
        AsyncStream { continuation in
            guard let wake = WakePipe() else {
                continuation.finish()
                whenStopped()
                return
            }
            continuation.onTermination = { _ in wake.signal() }
            let thread = Thread {
                var descriptors = [pollfd(fd: input, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0)]
                var byte: UInt8 = 0
                reading: while true {
                    guard poll(&descriptors, 2, -1) >= 0 else {
                        if errno == EINTR { continue }
                        break
                    }
                    if descriptors[1].revents != 0 { break }
                    guard descriptors[0].revents != 0 else { continue }
                    switch read(input, &byte, 1) {
                    case 1: continuation.yield(byte)
                    case -1 where errno == EINTR || errno == EAGAIN: continue reading
                    default: break reading
                    }
                }
                continuation.finish()
                wake.close()
                whenStopped()
            }
            thread.name = "keys"
            thread.start()
        }
    }
}

/// A pipe whose only message is "stop": written once by whoever ends the key stream, read by `poll`.
/// The write end is closed under the same lock it is written under, so a late `signal` never writes to a
/// descriptor number that the process has since reused.
private final class WakePipe: Sendable {
    let readEnd: Int32
    private let writeEnd: Locked<Int32?>

    init?() {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return nil }
        readEnd = ends[0]
        writeEnd = Locked(ends[1])
    }

    func signal() {
        writeEnd.withLock { end in
            guard let end else { return }
            var byte: UInt8 = 1
            _ = write(end, &byte, 1)
        }
    }

    func close() {
        writeEnd.withLock { end in
            if let open = end { _ = Glibc.close(open) }
            end = nil
        }
        _ = Glibc.close(readEnd)
    }
}
