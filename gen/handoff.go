package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/handoff"
	"github.com/evokore/evokore/internal/handshake"
)

// Sentinels asked of the SDK in place of the id and the version, then
// replaced by handoff's placeholders.
const (
	sentinelID      = "987654321987654"
	sentinelVersion = "evokore-version-sentinel"
	// unsupportedVersion stands for every version the SDK does not know.
	unsupportedVersion = "0000-00-00"
)

// renderHandoff renders the go-sdk's initialize answer for each protocol
// version it supports, and for one it does not, as templates for the
// stdio front (package handoff). The answers come from the SDK itself
// (handshake.Answer), so a go-sdk upgrade that changes them makes this
// file stale.
func renderHandoff(s *config.Shipped) *jen.File {
	f := jen.NewFile("handoff")
	impl := &mcp.Implementation{Name: s.Server.Name, Version: sentinelVersion}
	versions := mcp.SupportedProtocolVersions()
	slices.Sort(versions)
	f.Comment("answers are the go-sdk's initialize answers by requested protocol version,")
	f.Comment("with IDMark and VersionMark in place of the id and the build's version.")
	f.Var().Id("answers").Op("=").Map(jen.String()).String().Values(jen.DictFunc(func(d jen.Dict) {
		for _, v := range versions {
			d[jen.Lit(v)] = jen.Lit(answerTemplate(impl, s.Server.Instructions, v))
		}
	}))
	f.Comment("otherVersion is the answer to a protocol version not in answers.")
	f.Var().Id("otherVersion").Op("=").Lit(answerTemplate(impl, s.Server.Instructions, unsupportedVersion))
	return f
}

// answerTemplate asks the SDK to answer an initialize for version and
// marks the id and the version in its answer. Generation cannot go on
// without it, so a failure panics with the reason.
func answerTemplate(impl *mcp.Implementation, instructions, version string) string {
	frame := `{"jsonrpc":"2.0","id":` + sentinelID + `,"method":"initialize","params":{"protocolVersion":` +
		strconv.Quote(version) + `,"capabilities":{},"clientInfo":{"name":"gen","version":"0"}}}`
	msg, err := jsonrpc.DecodeMessage([]byte(frame))
	if err != nil {
		panic(fmt.Sprintf("handoff: decode %s: %v", frame, err))
	}
	answer := string(handshake.Answer(impl, instructions, msg))
	idText, versionText := `"id":`+sentinelID, strconv.Quote(sentinelVersion)
	if strings.Count(answer, idText) != 1 || strings.Count(answer, versionText) != 1 {
		panic(fmt.Sprintf("handoff: the SDK's answer to %s does not hold the id and the version once: %q", version, answer))
	}
	answer = strings.Replace(answer, idText, `"id":`+handoff.IDMark, 1)
	return strings.Replace(answer, versionText, `"`+handoff.VersionMark+`"`, 1)
}
