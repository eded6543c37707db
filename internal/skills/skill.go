package skills

import (
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/evokore/evokore/internal/config"
)

// Skill is one indexed skill document. Skills belong to an Index and never
// change once it is built.
type Skill struct {
	// Key is "category/name" in lower case: how get_skill_help and
	// dependency checks name a skill unambiguously.
	Key         string
	Name        string
	Description string
	// Category is the top-level directory the skill sits in; it is
	// authoritative. DeclaredCategory is what the frontmatter says.
	Category         string
	DeclaredCategory string
	// Subcategory is the '/'-joined directories between the category and
	// the skill ("" for cat/name/SKILL.md and cat/name.md).
	Subcategory string
	// Depth is the number of Subcategory segments: 0 for root skills.
	Depth int
	// Path is the file's path below the library root, '/'-separated.
	Path string
	// File is the file as the user knows it, for messages.
	File string
	// URI is the skill:// resource the skill is served as.
	URI string
	// Remote is set for a child's skill (extension.go).
	Remote *Remote

	Version string
	// version is Version parsed; nil when absent or not semver.
	version *semver.Version

	Tags []string
	// Aliases are the names the frontmatter gives the skill.
	Aliases []string
	// Derived are aliases that come from the layout: the file or
	// directory name and the path segments.
	Derived []string
	// Hints are "use when ..." phrases found in the description, the
	// summaries, resolutionHints and the start of the body.
	Hints     []string
	Summaries []string
	// MetadataText flattens the metadata block for search.
	MetadataText string
	Requires     []Requirement
	Conflicts    []config.SkillRef
	// Tools are tool names the skill says it uses.
	Tools []string

	// Body is the markdown after the frontmatter; BodyLine is the line of
	// the file it starts on.
	Body     string
	BodyLine int
	// Blocks are the fenced code blocks of the body, in order.
	Blocks []Block
	// links are the link targets of the body, resolved after indexing.
	links []string
	// fallback is the file or directory name the skill would be called
	// without a name in its frontmatter.
	fallback string
	// next are the skills to suggest after this one (see Index.Next).
	next []NextStep
	// boost is the rerank factor (see rerankFactor), fixed at indexing.
	boost float64
}

// Requirement is one requires entry with its constraint parsed.
type Requirement struct {
	config.SkillRef
	// Constraints is nil when the entry has no constraint or an invalid
	// one (then Err says why).
	Constraints *semver.Constraints
	Err         error
}

// Block is a fenced code block.
type Block struct {
	// Lang is the fence's info word, lower case; "" when the fence has
	// none.
	Lang string
	Code string
	// Line is the line of the opening fence in the file.
	Line int
}

// SemVer returns the parsed version, or nil.
func (s *Skill) SemVer() *semver.Version { return s.version }

// Where renders "category" or "category > subcategory".
func (s *Skill) Where() string {
	if s.Subcategory == "" {
		return s.Category
	}
	return s.Category + " > " + s.Subcategory
}

// actionable reports whether the skill reads as a procedure: it has code
// to run or numbered steps.
func (s *Skill) actionable() bool {
	if len(s.Blocks) > 0 {
		return true
	}
	return strings.Contains(s.Body, "\n1. ") || strings.HasPrefix(s.Body, "1. ")
}

// referenceLeaf reports whether the skill is supporting material rather
// than a workflow: it sits under a references/examples folder or says so
// in its name.
func (s *Skill) referenceLeaf() bool {
	for _, seg := range append(strings.Split(strings.ToLower(s.Subcategory), "/"), strings.ToLower(s.Name)) {
		switch seg {
		case "reference", "references", "ref", "refs", "examples", "example", "appendix", "resources", "templates":
			return true
		}
	}
	return false
}

// panel reports whether the skill is an expert-panel document (a
// "panel-*" file or a panels/ folder): a set of voices to consult, not a
// workflow to follow.
func (s *Skill) panel() bool {
	if strings.HasPrefix(strings.ToLower(s.Name), "panel-") {
		return true
	}
	for _, seg := range strings.Split(strings.ToLower(s.Subcategory), "/") {
		if seg == "panel" || seg == "panels" {
			return true
		}
	}
	return false
}
