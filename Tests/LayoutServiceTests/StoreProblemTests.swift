import HTTPTypes
import LayoutStore
import Logging
import Testing

@testable import LayoutService

/// What a client is told of a store's failure is decided in one place, by the failure's code.
@Suite struct StoreProblemTests {
    static let logger = Logger(label: "test.store-problem")

    @Test(arguments: [StoreError.Code.unavailable, .timeout])
    func aStoreThatMayAnswerSoonIsA503ToTryAgain(code: StoreError.Code) {
        let problem = ServiceProblem(storeError: StoreError(code, "postgres://x@db/feeds: down"), logger: Self.logger)
        #expect(problem.status == .serviceUnavailable)
        #expect(problem.kind == "store-unavailable")
        #expect(problem.headers[.retryAfter] == "2")
        #expect(!problem.detail.contains("postgres://"), "no store address reaches a client")
    }

    @Test(arguments: [StoreError.Code.damaged, .ioFailed, .cannotOpen, .leaseLost])
    func anyOtherFailureIsThe500OfEveryInternalFailure(code: StoreError.Code) {
        let problem = ServiceProblem(
            storeError: StoreError(code, "/var/lib/feedlayout/service.sqlite: disk I/O error"), logger: Self.logger)
        #expect(problem.status == .internalServerError)
        #expect(problem.kind == "internal")
        #expect(problem.detail == "the request could not be answered")
        #expect(problem.headers[.retryAfter] == nil)
    }
}

/// A store that cannot write for want of disk is a 507 that says so, on every route.
@Suite struct StorageFullProblemTests {
    @Test func aFullDiskIsA507InsufficientStorageThatNamesNoPath() {
        let problem = ServiceProblem(
            storeError: StoreError(.storageFull, "/var/lib/feedlayout/service.sqlite: the disk under the store is full"),
            logger: StoreProblemTests.logger)
        #expect(problem.status.code == 507)
        #expect(problem.status.reasonPhrase == "Insufficient Storage")
        #expect(problem.kind == "insufficient-storage")
        #expect(problem.detail.contains("disk is full"))
        #expect(problem.detail.contains("nothing of this request was stored"))
        #expect(!problem.detail.contains("/var/lib"), "no store path reaches a client")
        #expect(!StoreError(.storageFull, "x").isTransient, "a full disk is not waited out like a restart")
    }
}
