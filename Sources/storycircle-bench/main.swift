// The load generator lands with issue #8; until then this executable only says so.
import Foundation

FileHandle.standardError.write(Data("storycircle-bench: not built yet (issue #8)\n".utf8))
exit(1)
