import Foundation
import StoryCircleServer

/// The data folder holds children's names and answers, the admin token, the audio cache and the TLS keys:
/// on a shared laptop only the server's own user may read it. From start on, everything the server creates
/// is private (`umask` 077: folders 0700, files 0600, the SQLite database and its `-wal` and `-shm` too).
/// What is already there is checked before anything is read: a folder or file other users may *write* is
/// refused (they could have changed the rooms, the token or a key: the operator must look, and is told
/// the `chmod`); one they may only *read* is made private, with a log line, so that upgrading never
/// leaves a teacher stuck.
enum DataFolderPermissions {
    /// What the check found: refused entries (other users may write them) and the entries made private.
    struct Report {
        var writable: [(path: String, mode: mode_t, isFolder: Bool)] = []
        var tightened: [String] = []
        /// Entries of another user that others may read: they cannot be changed by this one.
        var foreign: [String] = []
    }

    /// From now on, what this process creates is its user's alone.
    static func createPrivately() {
        umask(0o077)
    }

    /// The data folder, and the audio cache and SQLite files where they are kept outside it.
    static func roots(_ configuration: ServerConfiguration) -> [String] {
        let data = configuration.files.dataDirectory
        func outside(_ path: String) -> Bool { !(path == data || path.hasPrefix(data + "/")) }
        var roots = [data]
        let audio = configuration.files.audioCacheDirectory
        if outside(audio) { roots.append(audio) }
        let database = configuration.storage.database
        if configuration.storage.usesDatabase, !database.contains("://"), outside(database) {
            roots += [database, database + "-wal", database + "-shm"]
        }
        return roots
    }

    /// Checks `roots` (folders walked whole, files alone; symbolic links are not followed) and makes what
    /// others may read private; throws the sentence an operator is told for what others may write.
    static func secure(_ roots: [String], logger: StoryCircleLog) throws(ClassroomServer.StartError) {
        let report = check(roots)
        if let first = report.writable.first {
            throw ClassroomServer.StartError(description: refusal(first, more: report.writable.count - 1, root: roots.first ?? first.path))
        }
        if !report.tightened.isEmpty {
            logger.notice("Data folder made private to this user", [
                "folder": roots.first ?? "", "count": String(report.tightened.count), "first": report.tightened[0],
            ])
        }
        if !report.foreign.isEmpty {
            logger.warning("Data folder holds files of another user that others may read", ["count": String(report.foreign.count), "first": report.foreign[0]])
        }
    }

    /// The check alone (no log): every entry other users may write, and every entry made private.
    static func check(_ roots: [String]) -> Report {
        var report = Report()
        for root in roots {
            guard var info = status(root) else { continue }
            visit(root, &info, &report)
            guard isFolder(info) else { continue }
            guard let walker = FileManager.default.enumerator(atPath: root) else { continue }
            while let relative = walker.nextObject() as? String {
                let path = root + "/" + relative
                guard var entry = status(path) else { continue }
                visit(path, &entry, &report)
                // A link to a folder is not walked into (the enumerator does not follow links, nor does this).
            }
        }
        return report
    }

    private static func visit(_ path: String, _ info: inout stat, _ report: inout Report) {
        let kind = info.st_mode & S_IFMT
        guard kind == S_IFDIR || kind == S_IFREG else { return }
        let mode = info.st_mode & 0o7777
        if mode & 0o022 != 0 {
            report.writable.append((path, mode, kind == S_IFDIR))
            return
        }
        guard mode & 0o077 != 0 else { return }
        guard info.st_uid == geteuid() else {
            report.foreign.append(path)
            return
        }
        if chmod(path, kind == S_IFDIR ? 0o700 : 0o600) == 0 { report.tightened.append(path) } else { report.foreign.append(path) }
    }

    /// The sentence for the first entry others may write, with the command that fixes it.
    static func refusal(_ entry: (path: String, mode: mode_t, isFolder: Bool), more: Int, root: String) -> String {
        let mode = String(entry.mode, radix: 8)
        let what = entry.isFolder && entry.path == root ? "the data folder \(entry.path)" : "\(entry.path) in the data folder"
        let fix = more > 0 ? "chmod -R go-rwx \(root)" : "chmod \(entry.isFolder ? "700" : "600") \(entry.path)"
        let others = more > 0 ? " (and \(more) more)" : ""
        return "\(what) can be changed by other users of this computer (mode \(mode))\(others): children's data and the admin token must be this user's alone. Check nobody changed it, then run: \(fix)"
    }

    private static func status(_ path: String) -> stat? {
        var info = stat()
        return lstat(path, &info) == 0 ? info : nil
    }

    private static func isFolder(_ info: stat) -> Bool {
        info.st_mode & S_IFMT == S_IFDIR
    }
}
