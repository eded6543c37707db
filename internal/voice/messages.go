package voice

// Client-visible texts. The validation errors and the close reasons are
// EVOKORE-MCP's, byte for byte, because hooks and scripts match on them.
const (
	msgTextNotString   = "text must be a string"
	msgTextTooLong     = "text exceeds maximum length of 10000 characters"
	msgPersonaNotText  = "persona must be a string"
	msgMaxConnections  = "Maximum connections reached"
	msgShuttingDown    = "Server shutting down"
	msgInvalidJSON     = "invalid JSON: "
	msgNotAnObject     = "message must be a JSON object"
	msgTooManyPending  = "too many messages waiting; send the next one after the previous utterance"
	msgSTTDisabled     = "speech-to-text is disabled: set EVOKORE_STT_ENABLED=true"
	msgAudioNotBase64  = "audio must be a base64 string"
	msgAudioRequired   = "audio is required"
	msgAudioTooLarge   = "audio exceeds the maximum size of 25 MB"
	msgLanguageNotText = "language must be a string"
	msgModelNotText    = "model must be a string"
)

// healthText is the text of the health probe message.
const healthText = "__health"

// maxTextLength is the longest text one message may carry, in UTF-16 code
// units as EVOKORE-MCP counted them.
const maxTextLength = 10000

// maxAudioBytes is the largest audio a transcribe message may carry after
// decoding; the 1 MB frame cap usually binds first.
const maxAudioBytes = 25 << 20
