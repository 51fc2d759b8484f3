import ALSA
import Glibc
import Testing
import Threads

private let hostHasNoSequencer = access("/dev/snd/seq", F_OK) != 0
private let hostHasNoSoundCard = access("/dev/snd", F_OK) != 0

@Suite struct ALSAErrorTests {
    @Test func description_namesFunctionAndReason() {
        let e = ALSAError(function: "snd_pcm_hw_params_set_rate_near", code: -EINVAL, context: "96000 Hz on hw:0")
        #expect(e.description == "snd_pcm_hw_params_set_rate_near failed: Invalid argument (96000 Hz on hw:0)")
    }

    @Test func noMatchingSource_listsCandidates() {
        let e = ALSAError(kind: .noMatchingSource(spec: "nano", candidates: ["24:0 'Virtual Raw MIDI 2-0' 'VirMIDI 2-0'"]),
            function: "connect", code: -ENOENT)
        #expect(e.description.contains("no sequencer source matches 'nano'"))
        #expect(e.description.contains("24:0 'Virtual Raw MIDI 2-0'"))
    }

    @Test(.enabled(if: hostHasNoSequencer, "this host has a sequencer"))
    func sequencerClient_withoutSequencer_throwsClearError() {
        #expect {
            _ = try SequencerClient(name: "carillon-test")
        } throws: { error in
            let e = error as? ALSAError
            return e?.kind == .sequencerUnavailable && e?.description
                == "ALSA sequencer not available (/dev/snd/seq: No such file or directory) — is the snd-seq module loaded?"
        }
    }

    @Test(.enabled(if: hostHasNoSoundCard, "this host has a sound card"))
    func pcmPlayback_withoutSoundCard_throwsClearError() {
        for device in ["default", "hw:0", "hw:Loopback,0"] {
            #expect {
                _ = try PCMPlayback(.init(device: device))
            } throws: { error in
                guard let e = error as? ALSAError, e.kind == .pcmUnavailable(device: device) else { return false }
                return e.description.hasPrefix("ALSA PCM device '\(device)' not available (snd_pcm_open: ")
            }
        }
    }

    @Test func realtimeRequest_reportsRatherThanFails() {
        // Granted (root, rtprio limit) or refused with a reason: either way it returns.
        let refusal = RealtimeScheduling.requestFIFO(priority: 10)
        #expect(refusal == nil ? RealtimeScheduling.isRealtime : !refusal!.isEmpty)
    }
}
