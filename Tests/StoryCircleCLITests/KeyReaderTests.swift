import Foundation
import Glibc
import Testing
@testable import storycircle

/// `Terminal.keys`, on a pipe instead of standard input.
struct KeyReaderTests {
    /// A pipe for the reader's input; both ends closed by `close()`.
    private struct Input {
        let readEnd: Int32
        let writeEnd: Int32

        init() throws {
            var ends: [Int32] = [0, 0]
            guard pipe(&ends) == 0 else { throw POSIXError(.EMFILE) }
            (readEnd, writeEnd) = (ends[0], ends[1])
        }

        func type(_ text: String) {
            _ = text.utf8CString.withUnsafeBufferPointer { write(writeEnd, $0.baseAddress, text.utf8.count) }
        }

        func close() {
            _ = Glibc.close(readEnd)
            _ = Glibc.close(writeEnd)
        }
    }

    /// Resolves when the reader's thread has ended; fails the test after `seconds` instead of hanging.
    private final class Stopped: Sendable {
        private let (stream, continuation) = AsyncStream.makeStream(of: Void.self)

        func signal() { continuation.yield() }

        func wait(seconds: Int) async -> Bool {
            await withTaskGroup(of: Bool.self) { group in
                group.addTask { [stream] in
                    for await _ in stream { return true }
                    return false
                }
                group.addTask {
                    try? await Task.sleep(for: .seconds(seconds))
                    return false
                }
                let first = await group.next() ?? false
                group.cancelAll()
                return first
            }
        }
    }

    @Test func cancellingTheConsumerEndsTheReaderWhileTheInputStaysOpen() async throws {
        let input = try Input()
        defer { input.close() }
        let stopped = Stopped()
        let keys = Terminal.keys(from: input.readEnd, whenStopped: stopped.signal)
        let (firstKey, gotFirst) = AsyncStream.makeStream(of: UInt8.self)
        let consumer = Task {
            for await key in keys { gotFirst.yield(key) }
        }
        input.type("s")
        var iterator = firstKey.makeAsyncIterator()
        #expect(await iterator.next() == UInt8(ascii: "s"))
        consumer.cancel()
        // Nothing more is typed and the pipe stays open: only the cancellation can end the reader.
        #expect(await stopped.wait(seconds: 10), "the key reader's thread outlived the command")
        // And it no longer takes what is typed: the byte stays in the pipe for whoever reads next.
        input.type("q")
        var byte: UInt8 = 0
        #expect(read(input.readEnd, &byte, 1) == 1 && byte == UInt8(ascii: "q"))
    }

    @Test func theEndOfTheInputEndsTheStream() async throws {
        let input = try Input()
        defer { _ = Glibc.close(input.readEnd) }
        let stopped = Stopped()
        let keys = Terminal.keys(from: input.readEnd, whenStopped: stopped.signal)
        input.type("nq")
        _ = Glibc.close(input.writeEnd)
        var received: [UInt8] = []
        for await key in keys { received.append(key) }
        #expect(received == Array("nq".utf8))
        #expect(await stopped.wait(seconds: 10))
    }
}
