package voice

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"unicode/utf16"
)

// Speak is the message a client sends to have text spoken. Text arrives in
// chunks; the chunk with Flush ends the utterance, which is then queued
// for playback. Nothing is sent back on success.
type Speak struct {
	Text    string `json:"text"`
	Persona string `json:"persona,omitempty"`
	Flush   bool   `json:"flush,omitempty"`
}

// messageKind tells the handlers apart.
type messageKind int

const (
	kindSpeak messageKind = iota
	kindHealth
	kindTranscribe
)

// inbound is one client message after validation.
type inbound struct {
	kind    messageKind
	text    string
	persona string
	flush   bool

	// transcribe
	audio    []byte
	language string
	model    string
}

// parseMessage validates one client message. A non-empty problem is the
// text to send back; sttProblem says it belongs in an stt_error rather
// than a plain error.
func parseMessage(data []byte) (m inbound, problem string, sttProblem bool) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		if json.Valid(data) {
			return m, msgNotAnObject, false
		}
		return m, msgInvalidJSON + err.Error(), false
	}
	if fields == nil {
		return m, msgNotAnObject, false
	}
	var typ string
	_ = json.Unmarshal(fields["type"], &typ)
	if typ == "transcribe" {
		return parseTranscribe(fields)
	}

	text, isString := stringField(fields, "text")
	if isString && text == healthText {
		return inbound{kind: kindHealth}, "", false
	}
	if !isString {
		return m, msgTextNotString, false
	}
	if utf16Len(text) > maxTextLength {
		return m, msgTextTooLong, false
	}
	m = inbound{kind: kindSpeak, text: text}
	if raw, ok := fields["persona"]; ok && !isNull(raw) {
		p, isString := stringField(fields, "persona")
		if !isString {
			return inbound{}, msgPersonaNotText, false
		}
		m.persona = p
	}
	m.flush = bytes.Equal(bytes.TrimSpace(fields["flush"]), []byte("true"))
	return m, "", false
}

func parseTranscribe(fields map[string]json.RawMessage) (m inbound, problem string, sttProblem bool) {
	m.kind = kindTranscribe
	raw, ok := fields["audio"]
	if !ok || isNull(raw) {
		return m, msgAudioRequired, true
	}
	enc, isString := stringField(fields, "audio")
	if !isString {
		return m, msgAudioNotBase64, true
	}
	if base64.StdEncoding.DecodedLen(len(enc)) > maxAudioBytes+3 {
		return m, msgAudioTooLarge, true
	}
	audio, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return m, msgAudioNotBase64, true
	}
	if len(audio) == 0 {
		return m, msgAudioRequired, true
	}
	if len(audio) > maxAudioBytes {
		return m, msgAudioTooLarge, true
	}
	m.audio = audio
	for _, f := range []struct {
		name, problem string
		dst           *string
	}{{"language", msgLanguageNotText, &m.language}, {"model", msgModelNotText, &m.model}} {
		if raw, ok := fields[f.name]; ok && !isNull(raw) {
			s, isString := stringField(fields, f.name)
			if !isString {
				return inbound{kind: kindTranscribe}, f.problem, true
			}
			*f.dst = s
		}
	}
	return m, "", false
}

// stringField reads fields[name] as a JSON string.
func stringField(fields map[string]json.RawMessage, name string) (string, bool) {
	raw, ok := fields[name]
	if !ok {
		return "", false
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// utf16Len counts s the way JavaScript's String.length does.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r) // ranging yields U+FFFD for bad bytes, never -1
	}
	return n
}

// errorReply answers a message that could not be handled.
type errorReply struct {
	Error string `json:"error"`
}

// healthReply answers {"text":"__health"}.
type healthReply struct {
	Type        string  `json:"type"`
	Status      string  `json:"status"`
	Connections int     `json:"connections"`
	Uptime      float64 `json:"uptime"`
	STTEnabled  bool    `json:"sttEnabled"`
	STTProvider *string `json:"sttProvider"`
	TTSProvider string  `json:"ttsProvider"`
}

// sttResult answers a transcribe message that succeeded.
type sttResult struct {
	Type       string   `json:"type"`
	Text       string   `json:"text"`
	Confidence *float64 `json:"confidence,omitempty"`
	Language   string   `json:"language,omitempty"`
	Duration   *float64 `json:"duration,omitempty"`
}

// sttError answers a transcribe message that failed.
type sttError struct {
	Type  string `json:"type"`
	Error string `json:"error"`
}
