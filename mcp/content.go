package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime"
	"os"
	"path/filepath"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/flower-run/flower/tool"
)

// imageDir is where images and other binary content a tool returns are
// saved, under the workspace: a tool result is text (model.ToolResult),
// so the model gets the file's path and reads or uses it from there.
const imageDir = ".flower/mcp"

// result maps a call's content to the text the model sees: text as is,
// images, audio and binary resources saved to files and named, resource
// links as a line with their uri, structured content as JSON when no text
// came with it. The whole is trimmed like a built-in's output.
func (t *Tool) result(ctx context.Context, res *sdk.CallToolResult) tool.Result {
	var parts []string
	for i, c := range res.Content {
		parts = append(parts, t.block(ctx, i, c))
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	text := strings.Join(parts, "\n")
	if text == "" {
		text = "(no output)"
	}
	return tool.Result{Content: tool.Cap(text, t.opts.OutputCap), IsError: res.IsError}
}

func (t *Tool) block(ctx context.Context, i int, c sdk.Content) string {
	switch c := c.(type) {
	case *sdk.TextContent:
		return c.Text
	case *sdk.ImageContent:
		return t.saved(ctx, i, "image", c.MIMEType, c.Data)
	case *sdk.AudioContent:
		return t.saved(ctx, i, "audio", c.MIMEType, c.Data)
	case *sdk.ResourceLink:
		return link(c)
	case *sdk.EmbeddedResource:
		r := c.Resource
		if r == nil {
			return "[empty embedded resource]"
		}
		if r.Text != "" || r.Blob == nil {
			return fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text)
		}
		return fmt.Sprintf("[resource %s] %s", r.URI, t.saved(ctx, i, "resource", r.MIMEType, r.Blob))
	}
	b, _ := json.Marshal(c)
	return string(b)
}

func link(c *sdk.ResourceLink) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[resource link] %s", c.URI)
	if c.Name != "" {
		fmt.Fprintf(&b, " (%s)", c.Name)
	}
	if c.MIMEType != "" {
		fmt.Fprintf(&b, " %s", c.MIMEType)
	}
	if c.Size != nil {
		fmt.Fprintf(&b, " %d bytes", *c.Size)
	}
	if c.Description != "" {
		fmt.Fprintf(&b, ": %s", c.Description)
	}
	return b.String()
}

// saved writes binary content to a file named by its hash (so running the
// call again writes the same file) and says where it is.
func (t *Tool) saved(ctx context.Context, i int, kind, mimeType string, data []byte) string {
	sum := sha256.Sum256(data)
	ext := ".bin"
	if exts, _ := mime.ExtensionsByType(mimeType); len(exts) > 0 {
		ext = exts[len(exts)-1]
	}
	rel := filepath.Join(imageDir, hex.EncodeToString(sum[:8])+ext)
	full := filepath.Join(t.opts.Workspace, rel)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err == nil {
		err = os.WriteFile(full, data, 0o644)
		if err == nil {
			return fmt.Sprintf("[%s %s, %d bytes, saved to %s]", kind, mimeType, len(data), rel)
		}
	}
	return fmt.Sprintf("[%s %s, %d bytes, not saved]", kind, mimeType, len(data))
}
