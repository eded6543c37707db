package skilltools_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/testutil/routertest"
)

// engineWithImage returns the first container engine whose daemon answers
// and that holds image locally (tests never pull: the network is not a
// test target), or why there is none.
func engineWithImage(image string) (string, string) {
	why := "neither docker nor podman is on PATH"
	for _, e := range []string{"docker", "podman"} {
		p, err := exec.LookPath(e)
		if err != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = exec.CommandContext(ctx, p, "info").Run()
		cancel()
		if err != nil {
			why = e + " is installed but its daemon does not answer (`" + e + " info` failed)"
			continue
		}
		ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
		err = exec.CommandContext(ctx, p, "image", "inspect", image).Run()
		cancel()
		if err != nil {
			why = e + " runs but has no local " + image + " image (`" + e + " pull " + image + "` to run this test)"
			continue
		}
		return e, ""
	}
	return "", why
}

const containerSkill = "---\nname: boxed\ndescription: Reports where it runs.\n---\n\n```sh\n" +
	"echo \"uid=$(id -u) sandbox=$EVOKORE_SANDBOX\"\n" +
	"touch /evokore-probe 2>/dev/null && echo root-writable || echo root-read-only\n" +
	"ls /sys/class/net | grep -qv '^lo$' && echo network || echo no-network\n```\n"

// The container sandbox: the default (auto) mode runs a step in a
// container whenever an engine answers, as an unprivileged user, with a
// read-only root and no network.
func TestExecuteSkillRunsInAContainerWhereAnEngineRuns(t *testing.T) {
	engine, why := engineWithImage("alpine:3.20")
	if engine == "" {
		t.Skip("container sandbox not exercised: " + why)
	}
	dir := library(t, map[string]string{"cat/boxed/SKILL.md": containerSkill})
	_, cs := withSkills(t, dir, map[string]string{"EVOKORE_ROLE": "admin", "EVOKORE_SANDBOX_MODE": "auto"})
	text, isErr := routertest.CallText(t, cs, "execute_skill", map[string]any{"skill_name": "boxed", "step": 0})
	want := "[sandbox: container (" + engine + ", alpine:3.20)]\nExit code: 0\n--- stdout ---\nuid=1000 sandbox=container\nroot-read-only\nno-network\n"
	if isErr || !strings.Contains(text, want) {
		t.Fatalf("isError=%v\n%s\nwant %q", isErr, text, want)
	}
}

// Where no engine answers, container mode says so instead of running the
// code unconfined, and auto mode falls back to a process, saying which.
func TestExecuteSkillSaysWhenNoContainerEngineRuns(t *testing.T) {
	if engine, _ := engineWithImage("alpine:3.20"); engine != "" {
		t.Skip("a container engine runs here: " + engine)
	}
	for _, name := range []string{"docker", "podman"} {
		if p, err := exec.LookPath(name); err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err = exec.CommandContext(ctx, p, "info").Run()
			cancel()
			if err == nil {
				t.Skip(name + " runs here (without the test image); the no-engine path cannot be observed")
			}
		}
	}
	dir := library(t, map[string]string{"cat/boxed/SKILL.md": containerSkill})
	_, cs := withSkills(t, dir, map[string]string{"EVOKORE_ROLE": "admin", "EVOKORE_SANDBOX_MODE": "container"})
	text, isErr := routertest.CallText(t, cs, "execute_skill", map[string]any{"skill_name": "boxed", "step": 0})
	if !isErr || !strings.Contains(text, "EVOKORE_SANDBOX_MODE=container, but no container engine (docker or podman) is running") {
		t.Errorf("container mode without an engine: isError=%v %q", isErr, text)
	}
	_, cs = withSkills(t, dir, map[string]string{"EVOKORE_ROLE": "admin"})
	text, isErr = routertest.CallText(t, cs, "execute_skill", map[string]any{"skill_name": "boxed", "step": 0})
	if isErr || !strings.Contains(text, "[sandbox: process]\nExit code: 0\n--- stdout ---\nuid=") || !strings.Contains(text, "sandbox=process") {
		t.Errorf("auto mode without an engine: isError=%v %q", isErr, text)
	}
}
