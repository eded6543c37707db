// Command contentserver is the child MCP server the tests of proxied
// prompts and resources run behind evokore: a go-sdk server with
//
//	prompts     greet {name (required), style}   "Hello, <name>!" (style "loud": upper case)
//	            plain {}                          one fixed message
//	resources   note://static                     "static note" (text/plain)
//	            note://counter                    "count <n>", n bumped by the bump tool
//	templates   note://items/{id}                 "item <id>"
//	completions greet's name: names from a fixed list starting with the typed value;
//	            note://items/{id}'s id: ids "1" "2" "10" starting with it
//	tools       bump {}                           n++, then notifies subscribers of note://counter
//	            add_prompt {name}                 adds a prompt (prompts/list_changed)
//	            add_resource {uri}                adds a resource (resources/list_changed)
//	            subscribers {}                    the URIs currently subscribed to
//	            logs {count}                      sends count log messages, then answers "logged <count>"
//	            elicit_enums {}                   asks for a form with a titled multi-select
//	                                              (SEP-1330: items.anyOf) and answers with the action
//
// Flags: -http ADDR serves streamable HTTP, -sse ADDR the older HTTP+SSE
// transport, else stdio. -name sets the implementation name.
package main

//lint:file-ignore SA1019 the logs tool sends log messages on purpose; see docs/decisions.md

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var names = []string{"Ada", "Alan", "Barbara", "Grace"}

func main() {
	httpAddr := flag.String("http", "", "serve streamable HTTP on ADDR")
	sseAddr := flag.String("sse", "", "serve HTTP+SSE on ADDR")
	name := flag.String("name", "contentserver", "implementation name")
	flag.Parse()

	var (
		mu      sync.Mutex
		counter int
		subs    = map[string]bool{}
	)
	srv := mcp.NewServer(&mcp.Implementation{Name: *name, Version: "1"}, &mcp.ServerOptions{
		SubscribeHandler: func(_ context.Context, req *mcp.SubscribeRequest) error {
			mu.Lock()
			subs[req.Params.URI] = true
			mu.Unlock()
			return nil
		},
		UnsubscribeHandler: func(_ context.Context, req *mcp.UnsubscribeRequest) error {
			mu.Lock()
			delete(subs, req.Params.URI)
			mu.Unlock()
			return nil
		},
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			p := req.Params
			var pool []string
			switch {
			case p.Ref.Type == "ref/prompt" && p.Ref.Name == "greet" && p.Argument.Name == "name":
				pool = names
			case p.Ref.Type == "ref/resource" && p.Ref.URI == "note://items/{id}" && p.Argument.Name == "id":
				pool = []string{"1", "2", "10"}
			default:
				return nil, fmt.Errorf("no completions for %s %s%s", p.Ref.Type, p.Ref.Name, p.Ref.URI)
			}
			out := []string{}
			for _, v := range pool {
				if strings.HasPrefix(v, p.Argument.Value) {
					out = append(out, v)
				}
			}
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: out, Total: len(out)}}, nil
		},
	})

	srv.AddPrompt(&mcp.Prompt{Name: "greet", Description: "Greets someone", Arguments: []*mcp.PromptArgument{
		{Name: "name", Required: true}, {Name: "style"},
	}}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		who := req.Params.Arguments["name"]
		if who == "" {
			return nil, fmt.Errorf("name is required")
		}
		text := "Hello, " + who + "!"
		if req.Params.Arguments["style"] == "loud" {
			text = strings.ToUpper(text)
		}
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}, nil
	})
	srv.AddPrompt(&mcp.Prompt{Name: "plain"}, fixedPrompt("a plain prompt"))

	srv.AddResource(&mcp.Resource{URI: "note://static", Name: "static", MIMEType: "text/plain"}, textResource(func() string { return "static note" }))
	srv.AddResource(&mcp.Resource{URI: "note://counter", Name: "counter", MIMEType: "text/plain"}, textResource(func() string {
		mu.Lock()
		defer mu.Unlock()
		return fmt.Sprintf("count %d", counter)
	}))
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "note://items/{id}", Name: "item", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id := strings.TrimPrefix(req.Params.URI, "note://items/")
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "item " + id}}}, nil
		})

	type nameArg struct {
		Name string `json:"name"`
	}
	type uriArg struct {
		URI string `json:"uri"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "bump", Description: "Bumps the counter resource"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		mu.Lock()
		counter++
		n := counter
		mu.Unlock()
		_ = srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "note://counter"})
		return text(fmt.Sprintf("count %d", n)), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "add_prompt", Description: "Adds a prompt"}, func(_ context.Context, _ *mcp.CallToolRequest, a nameArg) (*mcp.CallToolResult, any, error) {
		srv.AddPrompt(&mcp.Prompt{Name: a.Name}, fixedPrompt("added "+a.Name))
		return text("added " + a.Name), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "add_resource", Description: "Adds a resource"}, func(_ context.Context, _ *mcp.CallToolRequest, a uriArg) (*mcp.CallToolResult, any, error) {
		srv.AddResource(&mcp.Resource{URI: a.URI, Name: a.URI}, textResource(func() string { return "added " + a.URI }))
		return text("added " + a.URI), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "subscribers", Description: "Lists the subscribed URIs"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		mu.Lock()
		var uris []string
		for u := range subs {
			uris = append(uris, u)
		}
		mu.Unlock()
		sort.Strings(uris)
		return text(strings.Join(uris, ",")), nil, nil
	})

	type countArg struct {
		Count int `json:"count"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "logs", Description: "Sends log messages"}, func(ctx context.Context, req *mcp.CallToolRequest, a countArg) (*mcp.CallToolResult, any, error) {
		for i := range a.Count {
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: fmt.Sprintf("line %d", i)})
		}
		return text(fmt.Sprintf("logged %d", a.Count)), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "elicit_enums", Description: "Asks for a titled multi-select"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "pick", RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"titledMulti": map[string]any{"type": "array", "items": map[string]any{"type": "string", "anyOf": []map[string]any{
					{"const": "v1", "title": "One"}, {"const": "v2", "title": "Two"},
				}}},
			},
		}})
		if err != nil {
			return nil, nil, err
		}
		return text("action " + res.Action), nil, nil
	})

	switch {
	case *sseAddr != "":
		h := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil)
		log.Fatal(http.ListenAndServe(*sseAddr, h))
	case *httpAddr != "":
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
		log.Fatal(http.ListenAndServe(*httpAddr, h))
	default:
		_ = srv.Run(context.Background(), &mcp.StdioTransport{})
	}
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func fixedPrompt(s string) mcp.PromptHandler {
	return func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: s}}}}, nil
	}
}

func textResource(body func() string) mcp.ResourceHandler {
	return func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: body()}}}, nil
	}
}
