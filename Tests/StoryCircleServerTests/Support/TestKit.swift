// The test kit (ManualClock, …) for every file of this target, without an import in each: files written on
// other branches before the kit moved out of StoryCircleServer compile unchanged.
@_exported import StoryCircleTesting
