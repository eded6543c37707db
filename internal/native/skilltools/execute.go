package skilltools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/skills"
)

// MetaNextSteps is the _meta key of execute_skill's next steps:
// [{skill, reason, uri}]. The MCP result type has no room for
// EVOKORE-MCP's extra top-level nextSteps field, so it travels in _meta
// (and as text, for models that do not read _meta).
const (
	MetaNextSteps      = "nextSteps"
	MetaActivatedTools = "activatedTools"
)

func (t *Tools) executeSkill(ctx context.Context, call *native.Call) (*mcp.CallToolResult, error) {
	var in struct {
		Name string            `json:"skill_name"`
		Step *int              `json:"step"`
		Env  map[string]string `json:"env"`
	}
	if err := call.Decode(&in); err != nil {
		return call.Invalid(err), nil
	}
	ix := t.lib.Index()
	s := ix.Resolve(in.Name)
	if s == nil {
		msg := fmt.Sprintf("Skill '%s' not found. execute_skill needs an exact skill name or category/name key.", in.Name)
		if ms := ix.Search(in.Name, 3); len(ms) > 0 {
			names := make([]string, len(ms))
			for i, m := range ms {
				names[i] = m.Skill.Name
			}
			msg += " Did you mean: " + strings.Join(names, ", ") + "?"
		}
		return native.Errorf("%s", msg), nil
	}
	if s.Remote != nil && !s.Remote.Execute {
		return native.Errorf("Skill '%s' is served by the server '%s', and execute_skill runs only the library's own skills: its config must set \"executeSkills\": true for its skills to run. Read it with resources/read of %s.", s.Name, s.Remote.Server, s.URI), nil
	}
	if len(s.Blocks) == 0 {
		return native.Text("Skill '%s' has no code blocks to run. Read its instructions with get_skill_help.", s.Name), nil
	}
	if in.Step == nil {
		return native.Text("%s", t.listBlocks(s)), nil
	}
	// Steps count from 0, as EVOKORE-MCP's do: a step number a model
	// learnt there runs the same block here.
	step := *in.Step
	if step < 0 || step >= len(s.Blocks) {
		return native.Errorf("Step %d does not exist: skill '%s' has %d code block(s), numbered from 0.", step, s.Name, len(s.Blocks)), nil
	}
	block := s.Blocks[step]
	lang, ok := languages[block.Lang]
	if !ok {
		what := fmt.Sprintf("a '%s' block", block.Lang)
		if block.Lang == "" {
			what = "a block whose fence names no language"
		}
		return native.Errorf("Step %d of '%s' is %s, which execute_skill does not run (supported: %s).", step, s.Name, what, supportedLanguages), nil
	}
	if bad := checkEnv(in.Env); len(bad) > 0 {
		return native.Errorf("Refusing to run: %s may not be set. execute_skill passes only variables named %s* (capitals, digits and underscores), which no interpreter or tool reads.", strings.Join(bad, ", "), skillEnvPrefix), nil
	}
	if call.Bound != "" && call.Bound != stepBinding(s, in.Step) {
		return native.Errorf("Skill '%s' changed after this run of it was approved; nothing ran. Call it again to be asked anew.", s.Name), nil
	}
	extra := map[string]string{"EVOKORE_SESSION_ROLE": "", "EVOKORE_SESSION_ID": ""}
	if call.Session != nil {
		extra["EVOKORE_SESSION_ROLE"] = call.Session.Role
		extra["EVOKORE_SESSION_ID"] = call.Session.ID
	}
	r, err := t.sandbox.run(ctx, lang, block.Code, in.Env, extra)
	if err != nil {
		return native.Errorf("Cannot run step %d of '%s': %v.", step, s.Name, err), nil
	}
	text := r.Text(t.sandbox.timeout)
	res := &mcp.CallToolResult{IsError: r.ExitCode != 0 || r.TimedOut || r.Truncated}

	next := ix.Next(s)
	if next == nil {
		next = []skills.NextStep{}
	}
	activated := t.activate(call, append([]*skills.Skill{s}, ix.NextSkills(s)...))
	if len(next) > 0 {
		text += "\n\nNext steps:"
		for _, n := range next {
			text += fmt.Sprintf("\n- %s: %s", n.Skill, n.Reason)
		}
	}
	if len(activated) > 0 {
		text += "\n\nActivated for this session: " + strings.Join(activated, ", ")
	}
	res.Content = []mcp.Content{&mcp.TextContent{Text: text}}
	res.Meta = mcp.Meta{MetaNextSteps: next}
	if len(activated) > 0 {
		res.Meta[MetaActivatedTools] = activated
	}
	return res, nil
}

// listBlocks describes a skill's code blocks and whether each can run.
func (t *Tools) listBlocks(s *skills.Skill) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Skill '%s' has %d code block(s). Run one with execute_skill {skill_name: %q, step: N}.\n", s.Name, len(s.Blocks), s.Name)
	for i, bl := range s.Blocks {
		status := "runnable"
		if lang, ok := languages[bl.Lang]; !ok {
			status = "not runnable: unsupported language"
		} else if t.sandbox.runsAsProcess(lang) {
			if _, err := t.sandbox.interpreter(lang); err != nil {
				status = "not runnable here: " + err.Error()
			}
		}
		label := bl.Lang
		if label == "" {
			label = "text"
		}
		fmt.Fprintf(&b, "\nStep %d [%s] (%s), line %d:\n```%s\n%s\n```\n", i, label, status, bl.Line, bl.Lang, bl.Code)
	}
	return b.String()
}

// activate adds, in dynamic discovery mode, the tools the skills name
// (frontmatter tools / allowed-tools) to the session's tool list, so the
// model can call what the next steps need. Only tools the catalog has
// and the session does not list yet are activated.
func (t *Tools) activate(call *native.Call, list []*skills.Skill) []string {
	if call.Session == nil || t.host.Catalog == nil || t.opts.DiscoveryMode != config.ModeDynamic {
		return nil
	}
	snap := t.host.Catalog.Snapshot()
	var names []string
	seen := map[string]bool{}
	for _, s := range list {
		for _, name := range s.Tools {
			e, ok := snap.Lookup(name)
			if !ok || seen[name] || e.Source == catalog.SourceNative {
				continue
			}
			seen[name] = true
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	return call.Session.Activate(names...)
}

// StepBinding is what an approval of execute_skill binds besides its
// arguments: the skill's file and the exact code of the step it would run.
// A skill replaced after the approval (fetch_skill, an edit) no longer
// matches, so the approved retry is intercepted again instead of running
// code nobody saw; the handler checks it once more against the skill it
// is about to run (native.Call.Bound), since the library may be
// re-indexed between the check and the run. The human approving is shown
// the code, read from the same skill as the binding.
func (t *Tools) StepBinding(args json.RawMessage) (policy.Bound, error) {
	var in struct {
		Name string `json:"skill_name"`
		Step *int   `json:"step"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return policy.Bound{}, err
	}
	s := t.lib.Index().Resolve(in.Name)
	return policy.Bound{Key: stepBinding(s, in.Step), Shown: stepShown(s, in.Step)}, nil
}

// stepShown is what an approval of a step shows: which block of which
// file runs, in which language, and its code.
func stepShown(s *skills.Skill, step *int) string {
	switch {
	case s == nil:
		return "(no skill of that name: nothing runs)"
	case step == nil || *step < 0 || *step >= len(s.Blocks):
		return "(no step to run: the skill's blocks are listed)"
	}
	b := s.Blocks[*step]
	return fmt.Sprintf("step %d runs this %s block (%s, line %d):\n%s", *step, b.Lang, s.File, b.Line, b.Code)
}

// stepBinding hashes the skill s (nil: none of that name, which binds
// too, lest a skill created after the approval run under it) and the
// code of its step.
func stepBinding(s *skills.Skill, step *int) string {
	h := sha256.New()
	if s == nil {
		h.Write([]byte("no such skill"))
	} else {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00", s.Key, s.File, s.Body)
		if step != nil && *step >= 0 && *step < len(s.Blocks) {
			b := s.Blocks[*step]
			fmt.Fprintf(h, "%d\x00%s\x00%s", *step, b.Lang, b.Code)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}
