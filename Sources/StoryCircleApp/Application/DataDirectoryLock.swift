import Foundation
import Locking
import StoryCircleServer

/// One server per data folder: an exclusive `flock` on `<data>/lock`, held for the server's life, with the
/// holder's pid written inside so a second server can say who holds it. Two servers on one folder would
/// both restore the same rooms and diverge (two children given the same id, one child two answers).
///
/// The kernel drops the lock when the process ends, however it ends, so a crash never leaves a stale
/// lock behind; the file itself stays (removing it would let a third server lock a new file while the
/// second still holds the old one).
final class DataDirectoryLock: Sendable {
    let path: String
    private let held: Locked<Int32?>

    /// Why the lock could not be taken, said for an operator.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    init(directory: String) throws(Failure) {
        path = directory + "/lock"
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw Failure(description: "cannot write in the data folder \(directory): \(String(cString: strerror(errno))) (\(path))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno
            let holder = Self.holder(descriptor)
            Glibc.close(descriptor)
            if reason == EWOULDBLOCK {
                let who = holder.map { "(pid \($0))" } ?? "(pid unknown)"
                throw Failure(description: "another StoryCircle server \(who) is already using the data folder \(directory): stop it first, or give this one its own --data folder")
            }
            throw Failure(description: "cannot lock the data folder \(directory): \(String(cString: strerror(reason)))")
        }
        let pid = Array("\(getpid())\n".utf8)
        let written = ftruncate(descriptor, 0) == 0 ? pwrite(descriptor, pid, pid.count, 0) : -1
        guard written == pid.count else {
            let reason = String(cString: strerror(errno))
            Glibc.close(descriptor)
            throw Failure(description: "cannot write in the data folder \(directory): \(reason) (\(path))")
        }
        held = Locked(descriptor)
    }

    /// Lets another server use the folder (at the end of `stop`, after the last write).
    func release() {
        held.withLock { descriptor in
            guard let open = descriptor else { return }
            // Unlock before closing: a child process spawned meanwhile (by anything in this process) shares
            // the open file until its exec, and a close alone would leave the lock held through it.
            flock(open, LOCK_UN)
            Glibc.close(open)
            descriptor = nil
        }
    }

    deinit {
        release()
    }

    private static func holder(_ descriptor: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = pread(descriptor, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        return Int32(String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
