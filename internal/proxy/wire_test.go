package proxy

import (
	"bytes"
	"io"
	"testing"
)

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// pend puts a request in flight and returns its id and where its
// outcome arrives.
func pend(t *testing.T, wr *wire) (string, <-chan wireReply) {
	t.Helper()
	id, reply, ok := wr.begin()
	if !ok {
		t.Fatal("begin refused a request before the output ended")
	}
	return id, reply
}

// The wire takes exactly the responses to its own requests off a child's
// output; everything else, including messages that merely mention an id
// of ours, is left for the SDK.
func TestWireTakesOnlyResponsesToItsOwnRequests(t *testing.T) {
	var sent bytes.Buffer
	wr := newWire(newLockedStdin(nopCloser{&sent}, 0, nil))
	id, reply := pend(t, wr)
	other, otherReply := pend(t, wr)
	lost, lostReply := pend(t, wr)
	given, givenReply := pend(t, wr)

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
	// A call given up is the caller's: neither its answer nor the end
	// of the output settles it.
	if !wr.giveUp(given) || wr.giveUp(given) {
		t.Error("giveUp did not hand over the request exactly once")
	}
	if !wr.take([]byte(`{"jsonrpc":"2.0","id":"` + given + `","result":{}}`)) {
		t.Error("an answer to a request given up on reached the SDK")
	}
	wr.close()
	<-wr.closed
	if r := <-lostReply; !r.lost {
		t.Errorf("request %s in flight when the output ended: %+v", lost, r)
	}
	for name, ch := range map[string]<-chan wireReply{"answered": reply, "given up": givenReply} {
		select {
		case r := <-ch:
			t.Errorf("the %s request was settled again: %+v", name, r)
		default:
		}
	}
	if wr.giveUp(lost) {
		t.Error("a request settled as lost could still be given up")
	}
	if _, _, ok := wr.begin(); ok {
		t.Error("begin after the output ended succeeded")
	}
	if err := wr.send([]byte("x\n")); err == nil {
		t.Error("send after the output ended succeeded")
	}
}

func TestWireRefusesAResultThatIsNotAnObject(t *testing.T) {
	wr := newWire(newLockedStdin(nopCloser{io.Discard}, 0, nil))
	id, reply := pend(t, wr)
	wr.take([]byte(`{"jsonrpc":"2.0","id":"` + id + `","result":"text"}`))
	if r := <-reply; r.err == nil || r.result != nil {
		t.Errorf("a string result was passed on: %q", r.result)
	}
}
