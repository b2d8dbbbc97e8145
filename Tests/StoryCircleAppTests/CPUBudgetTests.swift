import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import StoryCircleApp

@Suite("CPU budget")
struct CPUBudgetTests {
    @Test func theAffinityListIsCountedAndAnythingElseIsNot() {
        let status = "Name:\tstorycircle\nCpus_allowed:\tf0d\nCpus_allowed_list:\t0-3,8,10-11\nMems_allowed_list:\t0\n"
        #expect(CPUBudget.coreCount(status: status) == 7)
        #expect(CPUBudget.coreCount(status: "Name:\tstorycircle\n") == nil)
        #expect(CPUBudget.coreCount(list: " 0\n") == 1)
        for wrong in ["", "3-1", "a", "0-", "-1", "1-2-3", "0-31:2", "0-9223372036854775807"] {
            #expect(CPUBudget.coreCount(list: Substring(wrong)) == nil, "\(wrong)")
        }
    }

    @Test func aQuotaUnderTwoCoresIsOneAndNoQuotaIsNone() {
        #expect(CPUBudget.quotaCores(cpuMax: "max 100000\n") == nil)
        #expect(CPUBudget.quotaCores(cpuMax: "150000 100000\n") == 1)
        #expect(CPUBudget.quotaCores(cpuMax: "50000 100000") == 1)
        #expect(CPUBudget.quotaCores(cpuMax: "200000 100000") == 2)
        for wrong in ["", "100000", "a b", "0 100000", "100000 0"] { #expect(CPUBudget.quotaCores(cpuMax: wrong) == nil, "\(wrong)") }
        #expect(CPUBudget.cgroupPath("0::/system.slice/storycircle.service\n") == "/system.slice/storycircle.service")
        #expect(CPUBudget.cgroupPath("0::/\n") == "/")
        #expect(CPUBudget.cgroupPath("12:cpu,cpuacct:/docker/abc\n") == nil)
    }

    /// This machine's own files are read: the process's affinity list is there and counted (were it not,
    /// `cores()` would fall back to the CPUs online without a word).
    @Test func thisProcessAffinityIsReadAndBoundsTheCores() throws {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let allowed = try #require(CPUBudget.coreCount(status: status))
        let online = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        #expect((1...online).contains(CPUBudget.cores()))
        #expect(CPUBudget.cores() <= allowed)
    }
}
