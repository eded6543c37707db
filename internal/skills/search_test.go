package skills

import (
	"slices"
	"strings"
	"testing"
)

func searchFixture(t *testing.T) *Index {
	t.Helper()
	ix := buildDir(t, writeTree(t, map[string]string{
		"review/pr-review/SKILL.md":       skillDoc("pr-review", "Review a pull request before merge.", "aliases: [review-pr, cr]", "tags: [review]"),
		"review/pr-review-lite/SKILL.md":  skillDoc("pr-review-lite", "A quick pass over small diffs.", "tags: [review]"),
		"review/prune/SKILL.md":           skillDoc("prune", "Remove stale branches.", "tags: [git]"),
		"ops/kubernetes-deploy/SKILL.md":  skillDoc("kubernetes-deploy", "Roll out a service to a cluster.", "tags: [deploy]"),
		"ops/incident/SKILL.md":           skillDoc("incident", "Handle an outage: mitigate first, then investigate."),
		"ops/latency/SKILL.md":            skillDoc("latency", "Find where request time goes with profiles and benchmarks."),
		"ops/incident/references/tips.md": skillDoc("incident-tips", "Reference notes on mitigation for an outage."),
		"ops/outage-runbook/SKILL.md":     skillDoc("outage-runbook", "Steps for an outage: mitigate, then communicate.", "tags: [runbook]"),
		"docs/writing/SKILL.md":           skillDoc("writing", "Write documentation people can follow."),
		"docs/long/SKILL.md":              "---\nname: long\ndescription: Unrelated.\n---\n" + strings.Repeat("filler words about nothing ", 50) + "bisect\n",
	}))
	if len(ix.Diagnostics) > 0 {
		t.Fatalf("fixture problems: %v", ix.Diagnostics)
	}
	return ix
}

func names(ms []Match) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Skill.Name
	}
	return out
}

func TestTierOneAliasExact(t *testing.T) {
	ix := searchFixture(t)
	ms := ix.Search("CR", 5)
	if len(ms) == 0 || ms[0].Skill.Name != "pr-review" || ms[0].Tier != TierAlias || ms[0].Reasons[0] != "alias exact: cr" {
		t.Fatalf("got %+v", ms)
	}
	// Names and file names count as aliases; separators do not matter.
	ms = ix.Search("PR Review", 5)
	if ms[0].Skill.Name != "pr-review" || ms[0].Tier != TierAlias {
		t.Fatalf("name as alias: %v", names(ms))
	}
}

func TestTierTwoNamePrefix(t *testing.T) {
	ix := searchFixture(t)
	ms := ix.Search("pr", 10)
	// "pr-review" and "pr-review-lite" and "prune" all start with "pr";
	// shorter names first at equal depth.
	got := names(ms)
	if len(got) < 3 || !slices.Equal(got[:3], []string{"prune", "pr-review", "pr-review-lite"}) {
		t.Fatalf("prefix tier: %v", got)
	}
	for _, m := range ms[:3] {
		if m.Tier != TierPrefix || !strings.HasPrefix(m.Reasons[0], "name prefix: ") {
			t.Errorf("%s: tier %d reasons %v", m.Skill.Name, m.Tier, m.Reasons)
		}
	}
}

func TestTiersComeInOrder(t *testing.T) {
	ix := searchFixture(t)
	ms := ix.Search("review", 10)
	// "review" is no alias; two names start with it? No: "pr-review"
	// does not start with "review", so everything is relevance.
	for _, m := range ms {
		if m.Tier != TierRelevance {
			t.Fatalf("%s came from tier %d", m.Skill.Name, m.Tier)
		}
	}
	ms = ix.Search("review-pr", 10)
	if ms[0].Tier != TierAlias {
		t.Fatalf("alias first: %+v", ms[0])
	}
	for i := 1; i < len(ms); i++ {
		if ms[i].Tier < ms[i-1].Tier {
			t.Fatalf("tier order broken at %d: %v", i, names(ms))
		}
		if ms[i].Skill == ms[0].Skill {
			t.Fatalf("a skill appears twice")
		}
	}
}

func TestRelevanceWeighsFieldsAndExplains(t *testing.T) {
	ix := searchFixture(t)
	ms := ix.Search("request time", 5)
	if len(ms) == 0 || ms[0].Skill.Name != "latency" {
		t.Fatalf("got %v", names(ms))
	}
	if !slices.ContainsFunc(ms[0].Reasons, func(r string) bool { return strings.HasPrefix(r, "description: ") }) {
		t.Errorf("reasons %v", ms[0].Reasons)
	}
	// A word only the body has still finds the skill.
	ms = ix.Search("bisect", 5)
	if len(ms) != 1 || ms[0].Skill.Name != "long" || ms[0].Reasons[0] != "body: bisect" {
		t.Fatalf("body match: %+v", ms)
	}
}

func TestStopWordsAreDropped(t *testing.T) {
	ix := searchFixture(t)
	a := names(ix.Search("what should we do when there is an outage", 5))
	b := names(ix.Search("outage", 5))
	if !slices.Equal(a, b) {
		t.Fatalf("stop words changed the result:\n%v\n%v", a, b)
	}
}

func TestExpansionRanksBelowTheWordAsTyped(t *testing.T) {
	ix := searchFixture(t)
	// "k8s" is in no skill; what it stands for, "kubernetes", is.
	ms := ix.Search("k8s", 5)
	if len(ms) == 0 || ms[0].Skill.Name != "kubernetes-deploy" || !ms[0].Expanded {
		t.Fatalf("expansion: %+v", ms)
	}
	if !strings.Contains(strings.Join(ms[0].Reasons, " "), "expanded: k8s → kubernetes") {
		t.Errorf("reasons %v", ms[0].Reasons)
	}
	// "outage" matches three skills as typed; one found only through what
	// the word expands to never ranks above them.
	ms = ix.Search("outage", 10)
	seenExpanded := false
	for _, m := range ms {
		if m.Expanded {
			seenExpanded = true
		} else if seenExpanded {
			t.Fatalf("%s matched as typed but ranks below an expansion-only match: %v", m.Skill.Name, names(ms))
		}
	}
	if len(ms) == 0 || ms[0].Expanded {
		t.Fatalf("outage: %v", names(ms))
	}
}

func TestTypoTolerance(t *testing.T) {
	ix := searchFixture(t)
	for _, q := range []string{"kuberntes", "kuberentes", "kubrnetes deploy"} {
		ms := ix.Search(q, 3)
		if len(ms) == 0 || ms[0].Skill.Name != "kubernetes-deploy" {
			t.Errorf("%q: %v", q, names(ms))
			continue
		}
		if !strings.Contains(strings.Join(ms[0].Reasons, " "), "typo: ") {
			t.Errorf("%q: reasons %v", q, ms[0].Reasons)
		}
	}
	if ms := ix.Search("zzzzqqqq", 3); len(ms) != 0 {
		t.Errorf("nonsense matched %v", names(ms))
	}
}

func TestRerankFavoursRootSkillsOverReferenceLeaves(t *testing.T) {
	ix := searchFixture(t)
	ms := ix.Search("mitigate outage", 5)
	got := names(ms)
	ri, ti := slices.Index(got, "outage-runbook"), slices.Index(got, "incident-tips")
	if ri < 0 || ti < 0 || ri > ti {
		t.Fatalf("root skill should rank above the reference leaf: %v", got)
	}
	if leaf := ix.ByName("incident-tips"); !leaf.referenceLeaf() || leaf.boost >= ix.ByName("outage-runbook").boost {
		t.Errorf("boosts: leaf %.2f root %.2f", leaf.boost, ix.ByName("outage-runbook").boost)
	}
}

func TestSearchLimitAndEmpty(t *testing.T) {
	ix := searchFixture(t)
	if ms := ix.Search("review", 1); len(ms) != 1 {
		t.Fatalf("limit: %d", len(ms))
	}
	if ms := ix.Search("   ", 5); ms != nil {
		t.Fatalf("blank query: %v", ms)
	}
	if ms := ix.Search("?!", 5); ms != nil {
		t.Fatalf("punctuation: %v", ms)
	}
}

func TestPanelDocumentsRankBelowRootSkillsUnlessAsked(t *testing.T) {
	ix := buildDir(t, writeTree(t, map[string]string{
		"security/threat-model/SKILL.md": skillDoc("threat-model", "Model the threats to a service.", "tags: [security]"),
		// The panel's own words fit the query better: only the rank rule
		// keeps it below the root skill.
		"security/panel-threat-model/SKILL.md":  skillDoc("panel-threat-model", "Model the threats to a service: threats, threat models, service threats.", "tags: [security]"),
		"security/threat-model/references/x.md": skillDoc("threat-model-reference", "Reference list of threats to a service."),
	}))
	got := names(ix.Search("model threats to a service", 5))
	if len(got) < 3 || got[0] != "threat-model" {
		t.Fatalf("the root skill should lead: %v", got)
	}
	got = names(ix.Search("expert panel to model threats", 5))
	if len(got) == 0 || got[0] != "panel-threat-model" {
		t.Fatalf("asked for a panel: %v", got)
	}
	got = names(ix.Search("reference list of threats", 5))
	if len(got) == 0 || got[0] != "threat-model-reference" {
		t.Fatalf("asked for the reference: %v", got)
	}
}
