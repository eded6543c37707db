package config

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseVoicesMergesPersonaOverDefault(t *testing.T) {
	src := `{
  "default": {"voiceId": "v-default", "voiceName": "Rachel", "model": "eleven_turbo_v2_5", "stability": 0.5,
              "similarityBoost": 0.75, "speed": 2.0, "outputFormat": "mp3_44100_128", "openaiVoice": "nova"},
  "personas": {
    "tester": {"voiceId": "v-tester", "stability": 0.2, "postProcessTempo": 1.5, "openaiVoice": "onyx"}
  }
}`
	v, ds := ParseVoices("voices.json", []byte(src))
	if ds != nil {
		t.Fatal(ds)
	}
	got, found := v.Resolve("tester")
	want := VoiceConfig{VoiceID: "v-tester", VoiceName: "Rachel", Model: "eleven_turbo_v2_5", Stability: 0.2,
		SimilarityBoost: 0.75, Speed: 2, OutputFormat: "mp3_44100_128", PostProcessTempo: 1.5, OpenAIVoice: "onyx"}
	if !found || got != want {
		t.Errorf("tester = %+v, %v; want %+v", got, found, want)
	}
	if got, found := v.Resolve("nobody"); found || got != v.Default {
		t.Errorf("unknown persona = %+v, %v; want the default", got, found)
	}
	if got, _ := v.Resolve(""); got != v.Default {
		t.Errorf("no persona = %+v; want the default", got)
	}
}

func TestParseVoicesErrorsArePositioned(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string
	}{
		{"syntax", "{\n  \"default\": \n}", []string{"voices.json:3:1: error: invalid JSON"}},
		{"misspelt key", "{\"default\": {\"voiceId\": \"v\", \"model\": \"m\", \"stability\": 0.5, \"similarityBoost\": 0.7,\n \"speed\": 1, \"outputFormat\": \"mp3_44100_128\"},\n \"personas\": {\"a\": {\"similarityBost\": 0.1}}}",
			[]string{"voices.json:3:", "personas.a.similarityBost: field not allowed"}},
		{"out of range", "{\"default\": {\"voiceId\": \"v\", \"model\": \"m\",\n \"stability\": 2, \"similarityBoost\": 0.7, \"speed\": 1, \"outputFormat\": \"f\"}}",
			[]string{"voices.json:2:", "default.stability"}},
		{"missing default", `{"personas": {}}`, []string{"default"}},
	}
	for _, c := range cases {
		_, ds := ParseVoices("voices.json", []byte(c.src))
		if ds == nil {
			t.Errorf("%s: no diagnostics", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(ds.Error(), w) {
				t.Errorf("%s: %q lacks %q", c.name, ds.Error(), w)
			}
		}
	}
}

func TestLoadVoicesMissingFile(t *testing.T) {
	_, err := LoadVoices(filepath.Join(t.TempDir(), "voices.json"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
}
