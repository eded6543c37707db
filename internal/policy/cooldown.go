package policy

import (
	"bytes"
	"encoding/json"
	"math"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/canonjson"
)

// Cooldowns stop a model from hammering a failing call: after a failure
// (an isError result, a transport error, a timeout) the same tool with the
// same arguments, from the same caller, is refused for the server's
// cooldown, while other arguments, and other callers, still run. Success
// never starts a cooldown, however short the answer.
type Cooldowns struct {
	now func() time.Time

	mu    sync.Mutex
	until map[string]time.Time
}

// NewCooldowns starts an empty cooldown table.
func NewCooldowns(now func() time.Time) *Cooldowns {
	if now == nil {
		now = time.Now
	}
	return &Cooldowns{now: now, until: map[string]time.Time{}}
}

// cooldownKey is the caller, the tool name and its canonical arguments.
// No arguments, null and {} are one call, as Binding takes them: a retry
// must not leave its cooldown by spelling "no arguments" another way.
func cooldownKey(caller, tool string, args json.RawMessage) string {
	if t := bytes.TrimSpace(args); len(t) == 0 || string(t) == "null" {
		args = json.RawMessage("{}")
	}
	c, err := canonjson.FromJSON(args, TokenField)
	if err != nil {
		c = args
	}
	return caller + "\x00" + tool + ":" + string(c)
}

// Check returns the refusal while caller's call is cooling down, else
// nil. caller is who calls (session.CallerOf), or "" for a cooldown every
// caller shares.
func (c *Cooldowns) Check(caller, tool string, args json.RawMessage) *mcp.CallToolResult {
	c.mu.Lock()
	idle := len(c.until) == 0
	c.mu.Unlock()
	if idle {
		return nil // nothing is cooling: skip canonicalising the arguments
	}
	key := cooldownKey(caller, tool, args)
	now := c.now()
	c.mu.Lock()
	until, ok := c.until[key]
	if ok && !now.Before(until) {
		delete(c.until, key)
		ok = false
	}
	c.mu.Unlock()
	if !ok {
		return nil
	}
	wait := int(math.Ceil(until.Sub(now).Seconds()))
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: CooldownText(tool, wait)}}}
}

// Fail starts a cooldown for caller's call.
func (c *Cooldowns) Fail(caller, tool string, args json.RawMessage, d time.Duration) {
	if d <= 0 {
		return
	}
	key := cooldownKey(caller, tool, args)
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.until) > 1024 {
		for k, u := range c.until {
			if !now.Before(u) {
				delete(c.until, k)
			}
		}
	}
	c.until[key] = now.Add(d)
}
