import Glibc

/// A value behind a lock that threads can also wait on: `waitUntil` blocks until the value satisfies a
/// condition, `withLockAndWake` changes it and wakes the waiters to look again. The one blocking wait the
/// code needs (a service thread waiting for work, a caller waiting for a thread to start), in place of
/// `NSCondition` and `DispatchSemaphore` beside `Locked`, on a pthread mutex and condition variable, which
/// ThreadSanitizer sees (see Locked.swift).
///
/// Blocks a thread: for threads of our own, never for tasks on the cooperative pool.
public final class LockedCondition<Value> {
    private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    public init(_ value: Value) {
        self.value = value
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        Self.check(pthread_mutex_init(mutex, nil), "pthread_mutex_init")
        Self.check(pthread_cond_init(condition, nil), "pthread_cond_init")
    }

    deinit {
        Self.check(pthread_cond_destroy(condition), "pthread_cond_destroy")
        Self.check(pthread_mutex_destroy(mutex), "pthread_mutex_destroy")
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` with the value while holding the lock; waiters are not woken (nothing they wait for
    /// changed).
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body(&value)
    }

    /// Runs `body` with the value while holding the lock, then wakes every waiter to check its condition.
    public func withLockAndWake<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock()
        defer {
            Self.check(pthread_cond_broadcast(condition), "pthread_cond_broadcast")
            unlock()
        }
        return try body(&value)
    }

    /// Blocks until `ready(value)` holds, then runs `body` with the value, all under the lock.
    public func waitUntil<Result>(_ ready: (Value) -> Bool, then body: (inout Value) throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        // pthread_cond_wait may return without a wake-up (spurious wake-ups): the loop checks again.
        while !ready(value) {
            Self.check(pthread_cond_wait(condition, mutex), "pthread_cond_wait")
        }
        return try body(&value)
    }

    private func lock() { Self.check(pthread_mutex_lock(mutex), "pthread_mutex_lock") }
    private func unlock() { Self.check(pthread_mutex_unlock(mutex), "pthread_mutex_unlock") }

    /// As in `Locked`: a failed pthread call gives up the exclusion the type promises, so it stops here.
    private static func check(_ result: Int32, _ call: StaticString) {
        guard result == 0 else { preconditionFailure("\(call) failed: \(String(cString: strerror(result)))") }
    }
}

/// Sendable only where `Value` is (NIO's rule): `@unchecked` because `value` is only touched under the mutex.
extension LockedCondition: @unchecked Sendable where Value: Sendable {}
