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
		return fmt.Errorf("connect to the voice sidecar at %s: %w", url, err)
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
