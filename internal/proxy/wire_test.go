package proxy

import (
	"bytes"
	"io"
	"testing"
)

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// The wire takes exactly the responses to its own requests off a child's
// output; everything else, including messages that merely mention an id
// of ours, is left for the SDK.
func TestWireTakesOnlyResponsesToItsOwnRequests(t *testing.T) {
	var sent bytes.Buffer
	wr := newWire(newLockedStdin(nopCloser{&sent}))
	id, reply, end := wr.begin()
	defer end()
	other, otherReply, endOther := wr.begin()
	defer endOther()

	for _, line := range []string{
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"` + id + `","progress":1}}`,
		`{"jsonrpc":"2.0","id":"` + id + `","method":"sampling/createMessage","params":{}}`,
		`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"` + id + `"}]}}`,
	} {
		if wr.take([]byte(line)) {
			t.Errorf("took %s", line)
		}
	}
	if !wr.take([]byte(`{"jsonrpc":"2.0","id":"` + wireIDPrefix + `999","result":{}}`)) {
		t.Error("an answer to a call given up on reached the SDK")
	}
	if !wr.take([]byte(`{"result":{"content":[], "isError":true},"jsonrpc":"2.0","id":"` + id + `"}`)) {
		t.Fatal("our response was not taken")
	}
	if r := <-reply; r.err != nil || string(r.result) != `{"content":[], "isError":true}` {
		t.Errorf("reply = %q %v", r.result, r.err)
	}
	if !wr.take([]byte(`{"jsonrpc":"2.0","id":"` + other + `","error":{"code":-32001,"message":"no"}}`)) {
		t.Fatal("our error response was not taken")
	}
	if r := <-otherReply; r.err == nil || r.err.Code != -32001 || r.err.Message != "no" {
		t.Errorf("error reply = %+v", r.err)
	}

	wr.cancel(id, `give "up"`)
	if got := sent.String(); got != `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"`+id+`","reason":"give \"up\""}}`+"\n" {
		t.Errorf("cancel wrote %q", got)
	}
	wr.close(io.EOF)
	<-wr.closed
	if err := wr.send([]byte("x\n")); err == nil {
		t.Error("send after the output ended succeeded")
	}
}

func TestWireRefusesAResultThatIsNotAnObject(t *testing.T) {
	wr := newWire(newLockedStdin(nopCloser{io.Discard}))
	id, reply, end := wr.begin()
	defer end()
	wr.take([]byte(`{"jsonrpc":"2.0","id":"` + id + `","result":"text"}`))
	if r := <-reply; r.err == nil || r.result != nil {
		t.Errorf("a string result was passed on: %q", r.result)
	}
}
