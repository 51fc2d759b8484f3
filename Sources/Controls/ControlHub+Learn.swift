import ControlDefinitions
import Foundation
import MIDI
import MappingFiles
import Parameters

/// MIDI learn, beside the hub's values: arming a target, the detector that
/// finds the source that moves, and the binding written into the mapping
/// file (`LearnedBindingFile`) and swapped in.
extension ControlHub {
    /// Arms MIDI learn: the next CC, 14-bit CC, NRPN/RPN or note that moves
    /// (not a repeat of the value it last sent, not a note-off) binds to
    /// `target`; the message that binds is not played. The binding is
    /// written into the mapping file (its text patched, comments and layout
    /// kept, checked as `carillon mapping check` would, saved atomically) and
    /// the mapping with it swapped in; observers get `.bound`, or `.failed`
    /// with the checker's message, in which case nothing changed. Arming
    /// again replaces the target. Any thread.
    public func learn(_ target: LearnTarget) throws(LearnError) {
        lock.lock()
        do {
            defer { lock.unlock() }
            guard let mapping = currentMapping else { throw LearnError.noMapping }
            if case .control(let name) = target {
                guard let def = mapping.controls.first(where: { $0.name == name }) else { throw LearnError.unknownControl(name) }
                guard def.kind != .readout else { throw LearnError.readout(name) }
                if let pad = def.pad { throw LearnError.padPart(name, pad: pad.name) }
            }
            learnTarget = target
            learnDetector.reset()
        }
        notifyLearn(.armed(target))
    }

    /// Disarms learn, if armed. Any thread.
    public func cancelLearn() {
        let target = lock.withLock { () -> LearnTarget? in
            defer { learnTarget = nil; learnDetector.reset() }
            return learnTarget
        }
        if let target { notifyLearn(.cancelled(target)) }
    }

    /// What learn waits to bind, nil when not armed.
    public var learning: LearnTarget? { lock.withLock { learnTarget } }

    /// Calls `handler` with every learn event (armed, bound, failed,
    /// cancelled), on the thread that caused it, outside the hub's lock.
    @discardableResult
    public func observeLearn(_ handler: @escaping (LearnEvent) -> Void) -> SubscriptionToken {
        lock.withLock { learnObservers.add(handler) }
    }

    public func unobserveLearn(_ token: SubscriptionToken) {
        lock.withLock { learnObservers.remove(token) }
    }

    struct LearnCandidate {
        var target: LearnTarget
        var source: ControlSource
        var mapping: ControlMapping
    }

    /// Under the lock: disarm and take what is needed to finish outside it.
    func takeLearnCandidate(_ source: ControlSource) -> LearnCandidate? {
        guard let target = learnTarget, let mapping = currentMapping else { return nil }
        learnTarget = nil
        learnDetector.reset()
        return LearnCandidate(target: target, source: source, mapping: mapping)
    }

    /// Outside the lock (file I/O): the binding written into the mapping
    /// file (`LearnedBindingFile`), that mapping swapped in (`takeWritten`), the observers told.
    func completeLearn(_ c: LearnCandidate) {
        do throws(MappingPatch.Failure) {
            let (binding, mapping) = try LearnedBindingFile.save(c.target, source: c.source, in: c.mapping)
            takeWritten(mapping)
            notifyLearn(.bound(binding))
        } catch {
            notifyLearn(.failed(c.target, error.description))
        }
    }

    private func notifyLearn(_ event: LearnEvent) {
        let observers = lock.withLock { learnObservers.handlers }
        for o in observers { o(event) }
    }
}
