package router_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/session"
)

// printer is an Observer: it sees every call's outcome, refused or run.
type printer struct{}

func (printer) Observe(_ context.Context, o router.Outcome) {
	fmt.Printf("observed %s refused=%v error=%v\n", o.Call.Entry.Name, o.Refused, o.Err)
}

// A pipeline with one native tool, one stage and one observer. The stage
// runs before the tool and may refuse the call; the observer sees both
// calls.
func Example() {
	natives := &native.Table{}
	natives.Bind(native.GetTelemetry, func(context.Context, *native.Call) (*mcp.CallToolResult, error) {
		return native.Text("42 calls"), nil
	})
	store := catalog.NewStore(nil, nil)
	store.SetNatives(natives.Entries())

	noNight := router.StageFunc(func(_ context.Context, c *router.Call) (*mcp.CallToolResult, error) {
		if strings.Contains(string(c.Args), "night") {
			return native.Errorf("not at night"), nil
		}
		return nil, nil // go on
	})
	r := router.New(router.Options{
		Catalog:   store,
		Natives:   natives,
		Stages:    []router.Stage{noNight},
		Observers: []router.Observer{printer{}},
	})

	sess := session.New("example", "")
	for _, args := range []string{`{}`, `{"when":"night"}`} {
		res, err := r.Call(context.Background(), sess, &mcp.CallToolParamsRaw{Name: "get_telemetry", Arguments: json.RawMessage(args)})
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Printf("%s isError=%v\n", res.Content[0].(*mcp.TextContent).Text, res.IsError)
	}
	// Output:
	// observed get_telemetry refused=false error=<nil>
	// 42 calls isError=false
	// observed get_telemetry refused=true error=<nil>
	// not at night isError=true
}
