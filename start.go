package flower

import (
	"context"
	"path/filepath"
	"time"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/human"
	"github.com/flower-run/flower/oracle"
	"github.com/flower-run/flower/permission"
	"github.com/flower-run/flower/resilience"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/tool"
	"github.com/flower-run/flower/workflow/starter"
)

// StartOptions say what a started Host's agents get besides the workspace.
type StartOptions struct {
	// Sink receives every event of the runs, secrets scrubbed; nil drops them.
	Sink event.Sink
	// Human, when set, gives the agents a person to ask and an inbox
	// (asks wait Timeout, at most MaxAsks of them); nil: no one answers,
	// and a permission rule that would ask denies (R9.3).
	Human *HumanOptions
	// Tools are more tools every agent gets (a workflow's verdict tool, a
	// tool of the embedder's own).
	Tools []tool.Tool
	// OfflineTimeout is how long a model call waits for an unreachable
	// endpoint before it fails with resilience.ErrOffline; 0 is R4.3's hour.
	OfflineTimeout time.Duration
	// Asker, when set, answers the permission questions of the runs in
	// place of the person's channel (a host program driving flower the
	// way the Claude Agent SDK drives Claude Code; front/headless).
	Asker agent.PermissionAsker
	// Gate applies a permission mode to the rules' decisions (Claude
	// Code's --permission-mode); nil applies none.
	Gate *permission.Gate
	// Sources offer more tools known only once they start (a host's
	// in-process MCP servers), besides flower.yaml's and .mcp.json's.
	Sources []tool.Source
	// LazySandbox launches the sandbox's helper at the first command
	// instead of as Start returns (where the launch overlaps the first
	// model request, issue 19): for a process driving many runs at once,
	// most of which may never start a command (the worker).
	LazySandbox bool
}

// HumanOptions shape the person's channel of a started Host.
type HumanOptions struct {
	MaxAsks *int          // nil: unlimited; 0: never ask
	Timeout time.Duration // how long an ask waits: human.Forever, or <= 0 unattended
}

// Start chooses the model, contains the agent's tool processes, opens the
// person's channel (restoring its journal after a crash) and builds the
// runtime. A sandbox that cannot contain here is said on Options.Notice;
// sandbox.mode: required where it cannot run is an error.
func (h *Host) Start(ctx context.Context, o StartOptions) error {
	if h.rt != nil {
		return errStarted
	}
	b, err := ChooseBackend(h.opts.Model, ModelClient(h.cfg, h.opts.IdleTimeout))
	if err != nil {
		return err
	}
	h.backend = b
	h.onClose(b.Close)
	retry := b.Retrier()
	if o.OfflineTimeout > 0 {
		retry.Policy = resilience.DefaultPolicy()
		retry.Policy.MaxOfflineWait = o.OfflineTimeout
	}
	if err := h.contain(!o.LazySandbox); err != nil {
		return err
	}
	h.secrets = Secrets(h.cfg, h.opts.Secrets...)
	h.oracle = oracle.New(oracle.Options{Workspace: h.ws, RunDir: h.runDir, Provider: b.Provider, Model: b.Model,
		Retry: retry, Secrets: h.secrets, Permissions: h.rules})
	h.onClose(func() { _ = h.oracle.Close() })
	h.sink = Redacting(h.secrets, func(e event.Event) {
		if o.Sink != nil {
			o.Sink(e)
		}
		h.oracle.Observe(e)
	})
	tools, err := h.openChannel(ctx, o.Human, h.sink)
	if err != nil {
		return err
	}
	sources, err := h.mcpServers()
	if err != nil {
		return err
	}
	ao := agent.Options{Workspace: h.ws, Store: h.store, Provider: b.Provider, Retry: retry, Trim: !h.opts.NoTrim,
		Tools: append(tools, o.Tools...), Policies: h.cfg.Policies(), Instructions: Instructions(h.ws),
		ToolEnv: h.toolEnv(), Secrets: h.secrets, Permissions: h.rules, Sources: append(sources, o.Sources...),
		Hooks: h.hooks(), RuleOrigin: h.cfg.RuleOrigin, Subagents: h.subagents()}
	h.claudeEnv()
	if h.channel != nil {
		ao.Mail, ao.MailTool, ao.Asker = h.channel, human.InboxName, h.channel
	}
	if o.Asker != nil {
		ao.Asker = o.Asker
	}
	ao.Gate = o.Gate
	if h.rt, err = agent.New(ao); err != nil {
		return err
	}
	return nil
}

// openChannel makes the person's channel, when there is a person, and
// restores what it had journaled; its tools are the agents' ask and inbox.
func (h *Host) openChannel(ctx context.Context, o *HumanOptions, sink event.Sink) ([]tool.Tool, error) {
	if o == nil {
		return nil, nil
	}
	h.channel = human.New(human.Options{Sink: sink, MaxAsks: o.MaxAsks, Timeout: o.Timeout,
		Workbench: filepath.Join(h.ws, starter.WorkbenchDir), Store: h.store, JournalKey: store.SideLog(h.ws, store.HumanJournal)})
	if err := h.channel.Restore(ctx); err != nil {
		return nil, err
	}
	return h.channel.Tools(), nil
}

// Runtime is the agent runtime (nil before Start).
func (h *Host) Runtime() *agent.Runtime { return h.rt }

// Channel is the person's channel (nil before Start, or without a person).
func (h *Host) Channel() *human.Channel { return h.channel }

// Backend is the model API in use (nil before Start).
func (h *Host) Backend() *Backend { return h.backend }

// Oracle is the run's read-only side agent (R6.5; nil before Start).
func (h *Host) Oracle() *oracle.Oracle { return h.oracle }

// Redact scrubs the secrets known to this Host from the text of every
// event before sink sees it.
func (h *Host) Redact(sink event.Sink) event.Sink { return Redacting(h.secrets, sink) }
