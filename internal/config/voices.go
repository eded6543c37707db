package config

import (
	"encoding/json"
	"errors"
	"io/fs"

	"github.com/evokore/evokore/schema"
)

// Voices is voices.json after validation: the default voice and the named
// personas that override parts of it.
type Voices struct {
	// File is where the voices were read from.
	File     string                  `json:"-"`
	Default  VoiceConfig             `json:"default"`
	Personas map[string]VoicePersona `json:"personas,omitempty"`
}

// VoiceConfig is everything a text-to-speech provider needs to speak one
// utterance. Fields a provider does not use are ignored by it.
type VoiceConfig struct {
	VoiceID          string  `json:"voiceId"`
	VoiceName        string  `json:"voiceName,omitempty"`
	Model            string  `json:"model"`
	Stability        float64 `json:"stability"`
	SimilarityBoost  float64 `json:"similarityBoost"`
	Speed            float64 `json:"speed"`
	OutputFormat     string  `json:"outputFormat"`
	PostProcessTempo float64 `json:"postProcessTempo,omitempty"`
	OpenAIVoice      string  `json:"openaiVoice,omitempty"`
	OpenAIModel      string  `json:"openaiModel,omitempty"`
}

// VoicePersona is a partial VoiceConfig; a nil field keeps the default's.
type VoicePersona struct {
	VoiceID          *string  `json:"voiceId,omitempty"`
	VoiceName        *string  `json:"voiceName,omitempty"`
	Model            *string  `json:"model,omitempty"`
	Stability        *float64 `json:"stability,omitempty"`
	SimilarityBoost  *float64 `json:"similarityBoost,omitempty"`
	Speed            *float64 `json:"speed,omitempty"`
	OutputFormat     *string  `json:"outputFormat,omitempty"`
	PostProcessTempo *float64 `json:"postProcessTempo,omitempty"`
	OpenAIVoice      *string  `json:"openaiVoice,omitempty"`
	OpenAIModel      *string  `json:"openaiModel,omitempty"`
}

// LoadVoices reads and validates a voices.json. Problems come back as
// [Diagnostics] positioned in the file; a missing file is reported as
// [fs.ErrNotExist] so the caller can fall back to the shipped voices.
func LoadVoices(file string) (*Voices, error) {
	src, err := ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err != nil {
		return nil, Diagnostics{ReadProblem(file, err)}
	}
	v, ds := ParseVoices(file, src)
	if ds != nil {
		return nil, ds
	}
	return v, nil
}

// ParseVoices validates the bytes of a voices.json against #Voices.
func ParseVoices(file string, src []byte) (*Voices, Diagnostics) {
	doc, ds := validate(file, src, formatJSON, schema.Voices)
	if ds != nil {
		return nil, ds
	}
	v := &Voices{File: file}
	if err := json.Unmarshal(src, v); err != nil {
		return nil, doc.decodeErr(err)
	}
	return v, nil
}

// Resolve returns the voice of persona: the persona's fields merged over
// the default. An empty or unknown persona speaks with the default voice;
// found reports whether the persona exists.
func (v *Voices) Resolve(persona string) (cfg VoiceConfig, found bool) {
	cfg = v.Default
	p, ok := v.Personas[persona]
	if persona == "" || !ok {
		return cfg, false
	}
	set(&cfg.VoiceID, p.VoiceID)
	set(&cfg.VoiceName, p.VoiceName)
	set(&cfg.Model, p.Model)
	set(&cfg.Stability, p.Stability)
	set(&cfg.SimilarityBoost, p.SimilarityBoost)
	set(&cfg.Speed, p.Speed)
	set(&cfg.OutputFormat, p.OutputFormat)
	set(&cfg.PostProcessTempo, p.PostProcessTempo)
	set(&cfg.OpenAIVoice, p.OpenAIVoice)
	set(&cfg.OpenAIModel, p.OpenAIModel)
	return cfg, true
}

func set[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}
