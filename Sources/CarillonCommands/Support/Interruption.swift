import Hosting
import Synchronization
import Threads
import Glibc
#if canImport(Glibc)
#endif

/// SIGINT/SIGTERM stop a render between blocks: the job then removes its temporary file.
enum Interruption {
    static let flag = CancellationFlag()
    static let signal = Atomic<Int32>(0)

    static func install() {
        _ = flag.isSet; _ = signal.load(ordering: .relaxed)   // initialise before a handler can run
        for sig in [SIGINT, SIGTERM] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { received in
                Interruption.signal.store(received, ordering: .relaxed)
                Interruption.flag.set()
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            sigaction(sig, &action, nil)
        }
        // A parent may have started us with these signals blocked (a blocked mask is inherited).
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT); sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }
}
