package tool

import "context"

type callKey struct{}

// WithCall returns ctx carrying the id of the tool call a tool runs for
// (the model's tool_use id). The runtime sets it; a tool that keeps a
// durable record of its own (the human channel) keys it by the call, so
// that the same call run again after a crash finds what it did.
func WithCall(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, callKey{}, id)
}

// CallID is the id set by WithCall, or "" outside a call.
func CallID(ctx context.Context) string {
	id, _ := ctx.Value(callKey{}).(string)
	return id
}
