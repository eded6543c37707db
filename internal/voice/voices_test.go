package voice

import (
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/testutil"
)

func TestShippedVoicesAreValid(t *testing.T) {
	v := shippedVoices()
	for _, p := range []string{"orchestrator", "researcher", "architect", "implementer", "tester", "reviewer"} {
		if got, found := v.Resolve(p); !found || got.VoiceID == v.Default.VoiceID {
			t.Errorf("persona %s: %+v, %v", p, got, found)
		}
	}
}

func TestVoicesReloadPerUtteranceAndKeepLastGood(t *testing.T) {
	fake := newFakeOpenAI(t)
	dir := t.TempDir()
	write := func(voice string) string {
		return testutil.WriteFile(t, dir, "voices.json", `{
  "default": {"voiceId": "v", "model": "m", "stability": 0.5, "similarityBoost": 0.5, "speed": 1, "outputFormat": "mp3_22050_32"},
  "personas": {"tester": {`+voice+`}}
}`)
	}
	path := write(`"openaiVoice": "onyx"`)
	sc := startSidecar(t, Options{TTS: fake.provider(), VoicesPath: path})
	c := dial(t, sc.url)
	say := func(n int) string {
		send(t, c, Speak{Text: "hello", Persona: "tester", Flush: true})
		waitArtefacts(t, sc.artifacts, n)
		calls := fake.calls()
		return calls[len(calls)-1].Body["voice"].(string)
	}
	if v := say(1); v != "onyx" {
		t.Fatalf("voice %s, want onyx", v)
	}

	write(`"openaiVoice": "echo", "similarityBost": 0.1`)
	if v := say(2); v != "onyx" {
		t.Errorf("with a broken voices.json: voice %s, want the last good onyx", v)
	}
	if log := sc.log.String(); !strings.Contains(log, "voices.json is invalid") || !strings.Contains(log, "voices.json:3:51: error: personas.tester.similarityBost: field not allowed") {
		t.Errorf("the problem is not reported at file:line:col:\n%s", log)
	}

	write(`"openaiVoice": "echo"`)
	if v := say(3); v != "echo" {
		t.Errorf("after the fix: voice %s, want echo", v)
	}
	send(t, c, Speak{Text: "who am I", Persona: "nobody", Flush: true})
	waitArtefacts(t, sc.artifacts, 4)
	if calls := fake.calls(); calls[3].Body["voice"] != "env-voice" {
		t.Errorf("unknown persona: voice %v, want the default", calls[3].Body["voice"])
	}
}
