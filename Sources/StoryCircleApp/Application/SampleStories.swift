import Foundation
import StoryCircleCore
import StoryCircleServer

/// The sample stories (`config/stories/*.json`), put in the story library when a server starts: each file
/// once, by its name (`StoryLibrary.seedStories`), so a sample a teacher deleted does not come back.
enum SampleStories {
    /// Seeds `library` from the files in `directory`; a file that does not load is logged and left out, and
    /// a store that cannot be written now is logged (the next start tries again): neither stops a server.
    /// A sample's pictures go into `pictures` first and the library holds it naming them by id: a story
    /// with picture files could never start a room.
    static func seed(_ library: any StoryLibrary, pictures: (any PictureStore)?, from directory: String, logger: StoryCircleLog, now: ServerTime) async {
        var seeds: [StorySeed] = []
        for (seed, path) in await load(directory, logger: logger) {
            guard !seed.story.pictureReferences.isEmpty else {
                seeds.append(seed)
                continue
            }
            guard let pictures else {
                logger.warning("Sample story not added", ["file": path, "reason": "this server's store keeps no pictures"])
                continue
            }
            do {
                seeds.append(StorySeed(key: seed.key, story: try await StoryPictures.storing(seed.story, storyPath: path, in: pictures, now: now)))
            } catch let failure as StoryPictures.StoryPictureFailure {
                logger.warning("Sample story not added", ["file": path, "reason": failure.description])
            } catch {
                logger.warning("Sample story not added", ["file": path, "reason": StoreFailure.from(error, record: "picture").reason])
            }
        }
        guard !seeds.isEmpty else { return }
        do {
            let added = try await library.seedStories(seeds)
            if added > 0 { logger.info("Sample stories added to the library", ["stories": String(added)]) }
        } catch {
            logger.warning("Sample stories could not be added to the library", ["error": StoreFailure.from(error, record: "story").reason])
        }
    }

    /// The stories of `directory`, read on a thread of their own (file reads stay off Swift's pool).
    static func load(_ directory: String, logger: StoryCircleLog) async -> [(StorySeed, path: String)] {
        let (seeds, problems) = await withCheckedContinuation { (continuation: CheckedContinuation<([(StorySeed, path: String)], [(String, String)]), Never>) in
            let thread = Thread { continuation.resume(returning: read(directory)) }
            thread.name = "sample-stories"
            thread.start()
        }
        for (file, problem) in problems {
            logger.warning("Sample story not added", ["file": file, "reason": problem])
        }
        return seeds
    }

    static func read(_ directory: String) -> ([(StorySeed, path: String)], [(String, String)]) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return ([], []) }
        var seeds: [(StorySeed, path: String)] = []
        var problems: [(String, String)] = []
        for name in names.sorted() where name.hasSuffix(".json") {
            let path = (directory as NSString).appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: path) else {
                problems.append((path, "unreadable"))
                continue
            }
            let loaded = Story.load(json: data)
            guard let story = loaded.value else {
                problems.append((path, loaded.errors.map(\.description).joined(separator: "; ")))
                continue
            }
            seeds.append((StorySeed(key: name, story: story), path: path))
        }
        return (seeds, problems)
    }
}
