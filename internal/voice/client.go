package voice

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/coder/websocket"
)

// Say sends one whole utterance to the sidecar at url (such as
// ws://127.0.0.1:8888) and returns once the sidecar has it. The sidecar
// acknowledges nothing on success, so Say cannot know whether the audio
// played; it reports only whether the text was delivered.
func Say(ctx context.Context, url, text, persona string) error {
	c, resp, err := websocket.Dial(ctx, url, nil)
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		return &DialError{URL: url, Err: err}
	}
	defer c.CloseNow()
	b, _ := json.Marshal(Speak{Text: text, Persona: persona, Flush: true})
	if err := c.Write(ctx, websocket.MessageText, b); err != nil {
		return fmt.Errorf("send to the voice sidecar: %w", err)
	}
	// A normal close waits for the sidecar's close frame, which comes only
	// after it has read the message.
	if err := c.Close(websocket.StatusNormalClosure, ""); err != nil {
		return fmt.Errorf("close the voice sidecar connection: %w", err)
	}
	return nil
}

// DialError is Say finding no sidecar at URL: nothing listens there, or
// what answers is not a sidecar.
type DialError struct {
	URL string
	Err error
}

func (e *DialError) Error() string {
	return fmt.Sprintf("connect to the voice sidecar at %s: %v", e.URL, e.Err)
}

func (e *DialError) Unwrap() error { return e.Err }
