import Glibc

/// A value behind a lock: the shape of `Synchronization.Mutex`, on a pthread mutex.
///
/// Why not `Mutex`: on Linux it is built on raw futex calls, which ThreadSanitizer does not see, so every
/// access made under it is reported as a race (checked with a four-thread counter: `Mutex` reports,
/// `pthread_mutex` does not). `make test` runs the server under ThreadSanitizer, and reports that are
/// all false would hide the true one. A pthread mutex is what TSan intercepts.
///
public final class Locked<Value> {
    private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init(_ value: Value) {
        self.value = value
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        Self.check(pthread_mutex_init(mutex, nil), "pthread_mutex_init")
    }

    deinit {
        Self.check(pthread_mutex_destroy(mutex), "pthread_mutex_destroy")
        mutex.deallocate()
    }

    /// Runs `body` with the value while holding the lock.
    @inline(__always)
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        Self.check(pthread_mutex_lock(mutex), "pthread_mutex_lock")
        defer { Self.check(pthread_mutex_unlock(mutex), "pthread_mutex_unlock") }
        return try body(&value)
    }

    /// A pthread call that fails means memory is corrupt or the lock is misused (a deadlock the library
    /// noticed, an unlock by another thread): carrying on would give up the exclusion the type promises,
    /// so it stops the process, as swift-log's and NIO's locks do.
    @inline(__always)
    private static func check(_ result: Int32, _ call: StaticString) {
        guard result == 0 else { preconditionFailure("\(call) failed: \(String(cString: strerror(result)))") }
    }
}

/// Sendable only where `Value` is (NIO's rule for `NIOLockedValueBox`): a lock makes access exclusive, but a
/// non-Sendable value handed out of `withLock` could still be shared by two threads. `@unchecked` because
/// `value` is only read or written inside `withLock`, while the mutex is held.
extension Locked: @unchecked Sendable where Value: Sendable {}
