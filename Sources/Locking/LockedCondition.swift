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
        // Timed waits measure on the monotonic clock: the default (the wall clock) would make a wait end
        // early or late when the system time is set.
        var attributes = pthread_condattr_t()
        Self.check(pthread_condattr_init(&attributes), "pthread_condattr_init")
        Self.check(pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC), "pthread_condattr_setclock")
        Self.check(pthread_cond_init(condition, &attributes), "pthread_cond_init")
        Self.check(pthread_condattr_destroy(&attributes), "pthread_condattr_destroy")
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

    /// Blocks until `ready(value)` holds or `timeout` has passed, whichever is first; true if it holds. For
    /// a waiter that must do something now and then while it waits (wake a loop that may be asleep).
    public func waitUntil(_ ready: (Value) -> Bool, timeout: Duration) -> Bool {
        var deadline = timespec()
        guard clock_gettime(CLOCK_MONOTONIC, &deadline) == 0 else { preconditionFailure("clock_gettime failed: \(String(cString: strerror(errno)))") }
        let (seconds, attoseconds) = max(timeout, .zero).components
        let nanoseconds = Int(deadline.tv_nsec) + Int(attoseconds / 1_000_000_000)
        deadline.tv_sec += Int(seconds) + nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        lock()
        defer { unlock() }
        while !ready(value) {
            let result = pthread_cond_timedwait(condition, mutex, &deadline)
            if result == ETIMEDOUT { return ready(value) }
            Self.check(result, "pthread_cond_timedwait")
        }
        return true
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
