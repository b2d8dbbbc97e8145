import StoryCircleCore

/// Rooms following their class (`ClassBook`): a class saved here is offered at once to its live rooms; a
/// child erased or a class deleted changes what its finished rooms show; and, with a store shared by
/// several nodes, a class changed through another node is noticed by reading it again as often as leases
/// are renewed. Nothing to do for a store that keeps no classes.
actor ClassFollowing {
    let lifecycle: RoomLifecycle
    let classes: (any ClassBook)?
    let store: any RoomStore
    let logger: StoryCircleLog
    /// A `followStoredClasses` is under way (at most one at a time).
    private var following = false
    private let tasks = OwnedTasks()

    init(lifecycle: RoomLifecycle, services: RoomServices) {
        self.lifecycle = lifecycle
        self.classes = services.storage.classes
        self.store = services.store
        self.logger = services.logger
    }

    /// The class `roster.id` was saved: its live rooms in memory here follow it (`RoomState.followClass`).
    func classChanged(_ roster: ClassRoster) async {
        for room in await lifecycle.liveRooms where await room.classRoster?.id == roster.id {
            await room.followClass(roster)
        }
    }

    /// Lets finished rooms among `codes` go from memory (their class was deleted, and they with it).
    func forgetFinished(_ codes: [String]) async {
        for code in codes {
            guard let room = await lifecycle.room(code), await room.phase == .finished else { continue }
            await lifecycle.remove(code, room, RoomError(.roomEnded, "This room has finished."))
        }
    }

    /// Makes finished rooms among `codes` that are in memory take what the store holds of them now (after a
    /// child's data was erased there), in place (`Room.reload`), so that the pages still on them get the
    /// results as stored. A room that cannot be read again or reload is let go from memory instead: the
    /// next request reads it from the store.
    func reloadFinished(_ codes: [String]) async {
        for code in codes {
            guard let room = await lifecycle.room(code), await room.phase == .finished else { continue }
            do {
                var roster: ClassRoster?
                let archive = try await store.archive(room: code)
                if let classID = archive?.header.classID, let classes {
                    roster = try await classes.schoolClass(classID).map(ClassRoster.init)
                }
                guard await lifecycle.room(code) === room else { continue }
                if let archive, await room.reload(from: archive, classRoster: roster) { continue }
                // Its last records (the room has just ended) are still being stored: letting it go now would
                // give up its lease before they are. Once they are, it is read again, with them.
                if archive != nil, await room.waitUntilStored(), await lifecycle.room(code) === room,
                   let again = try await store.archive(room: code), await room.reload(from: again, classRoster: roster) { continue }
            } catch {
                logger.error("Room could not be read again after its class changed; it is let go from memory", [
                    "room.code": code, "error": StoreFailure.from(error, record: "archive").reason,
                ])
            }
            await lifecycle.remove(code, room, RoomError(.roomEnded, "This room has finished."))
        }
    }

    /// Reloads the finished rooms of class `classID` in memory (`reloadFinished`), after the class's data
    /// changed in the store. The change has committed by then, so a store that cannot list the rooms is only logged.
    func reloadFinishedRooms(ofClass classID: String) async {
        guard let classes else { return }
        do {
            await reloadFinished(try await classes.classRooms(classID).map(\.header.code))
        } catch {
            logger.error("Rooms of a changed class could not be listed to let them go from memory", [
                "class.id": classID, "error": StoreFailure.from(error, record: "class.rooms").reason,
            ])
        }
    }

    /// Starts `followStoredClasses` as a task of its own, unless the last one is still reading.
    func followStoredClassesUnlessFollowing() {
        guard !following else { return }
        following = true
        tasks.spawn { [self] in
            await followStoredClasses()
            await followed()
        }
    }

    private func followed() { following = false }

    /// With a store shared by several nodes, a class may be changed through another node: every class
    /// whose rooms are in memory here is read again, and a room whose class's version moved follows it (a
    /// live one offers the names as they are, `classChanged`; a finished one is reloaded in place,
    /// `reloadFinished`, so a child erased elsewhere is not shown here from memory). A class deleted
    /// elsewhere takes its finished rooms out of memory. Failures are logged; the next round tries again.
    func followStoredClasses() async {
        guard let classes else { return }
        var byClass: [String: [(code: String, room: Room, version: Int)]] = [:]
        for (code, room) in await lifecycle.rooms {
            if let roster = await room.classRoster { byClass[roster.id, default: []].append((code, room, roster.version)) }
        }
        for (classID, held) in byClass {
            let stored: SchoolClass?
            do {
                stored = try await classes.schoolClass(classID)
            } catch {
                logger.warning("Class could not be read to see whether it changed", ["class.id": classID, "error": StoreFailure.from(error, record: "class").reason])
                continue
            }
            guard let stored else {
                await forgetFinished(held.map(\.code))
                continue
            }
            let changed = held.filter { $0.version != stored.version }
            guard !changed.isEmpty else { continue }
            var finished: [String] = []
            for entry in changed {
                if await entry.room.phase == .finished { finished.append(entry.code) } else { await entry.room.followClass(ClassRoster(stored)) }
            }
            await reloadFinished(finished)
        }
    }

    /// Waits for a reading of the classes under way, and starts none after.
    func stop() async {
        await tasks.stop()
    }
}
