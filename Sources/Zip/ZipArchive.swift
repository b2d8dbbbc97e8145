import CZip

/// The files of a ZIP archive, read with libzip and bounded before and while they are read: how many
/// entries, how many bytes in all once inflated, and how far one entry may inflate (a small archive that
/// inflates to gigabytes is refused, not unpacked). Nothing is written to disk; entries are returned by
/// their names in the archive.
public enum ZipArchive {
    public struct Limits: Sendable, Equatable {
        public var maximumEntries: Int
        /// Bytes of every entry together, inflated.
        public var maximumTotalBytes: Int
        /// How many times its compressed size one entry may inflate to (text compresses ten or twenty
        /// times; a bomb, thousands).
        public var maximumRatio: Int

        public init(maximumEntries: Int = 64, maximumTotalBytes: Int = 16 * 1024 * 1024, maximumRatio: Int = 200) {
            self.maximumEntries = maximumEntries
            self.maximumTotalBytes = maximumTotalBytes
            self.maximumRatio = maximumRatio
        }
    }

    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// Not a ZIP file, or a damaged one (libzip's words).
        case unreadable(String)
        case tooManyEntries(Int)
        case tooLarge
        /// An entry that inflates far more than text does.
        case inflatesTooMuch(String)
        case encrypted(String)

        public var description: String {
            switch self {
            case .unreadable(let reason): "it is not a ZIP file StoryCircle can read (\(reason))"
            case .tooManyEntries(let count): "it has \(count) entries; an export has a few files"
            case .tooLarge: "its files are larger than 16 MB once unpacked"
            case .inflatesTooMuch(let name): "\(name) unpacks to far more than a text file would"
            case .encrypted(let name): "\(name) is encrypted"
            }
        }
    }

    /// Every file entry of the archive at `path` (directories left out), in the archive's order.
    public static func entries(at path: String, limits: Limits = Limits()) throws(Failure) -> [(name: String, bytes: [UInt8])] {
        var code: Int32 = 0
        guard let archive = zip_open(path, ZIP_RDONLY, &code) else {
            var error = zip_error_t()
            zip_error_init_with_code(&error, code)
            defer { zip_error_fini(&error) }
            throw .unreadable(String(cString: zip_error_strerror(&error)))
        }
        defer { zip_discard(archive) }
        let count = Int(zip_get_num_entries(archive, 0))
        guard count <= limits.maximumEntries else { throw .tooManyEntries(count) }
        var entries: [(name: String, bytes: [UInt8])] = []
        var total = 0
        for index in 0..<count {
            var stat = zip_stat_t()
            zip_stat_init(&stat)
            guard zip_stat_index(archive, zip_uint64_t(index), 0, &stat) == 0, let cName = stat.name else {
                throw .unreadable(String(cString: zip_strerror(archive)))
            }
            let name = String(cString: cName)
            if name.hasSuffix("/") { continue }
            if stat.valid & zip_uint64_t(ZIP_STAT_ENCRYPTION_METHOD) != 0, stat.encryption_method != ZIP_EM_NONE { throw .encrypted(name) }
            // What the header says is checked first, and what is read is counted as well: a header may lie.
            let declared = Int(clamping: stat.size)
            guard total + declared <= limits.maximumTotalBytes else { throw .tooLarge }
            let compressed = max(Int(clamping: stat.comp_size), 1)
            guard declared / compressed <= limits.maximumRatio else { throw .inflatesTooMuch(name) }
            guard let file = zip_fopen_index(archive, zip_uint64_t(index), 0) else { throw .unreadable(String(cString: zip_strerror(archive))) }
            defer { zip_fclose(file) }
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let read = chunk.withUnsafeMutableBytes { zip_fread(file, $0.baseAddress!, zip_uint64_t($0.count)) }
                if read < 0 { throw .unreadable(String(cString: zip_file_strerror(file))) }
                if read == 0 { break }
                bytes += chunk[0..<Int(read)]
                guard total + bytes.count <= limits.maximumTotalBytes, bytes.count <= declared else { throw bytes.count > declared ? .inflatesTooMuch(name) : .tooLarge }
            }
            total += bytes.count
            entries.append((name, bytes))
        }
        return entries
    }
}
