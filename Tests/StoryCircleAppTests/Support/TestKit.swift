// The test kits for every file of this target, without an import in each.
@_exported import StoryCircleServerTesting
@_exported import StoryCircleTesting
