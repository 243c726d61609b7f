// driver.mjs runs one scenario of the real Claude Agent SDK against flower
// (cmd/flower sdk_test.go): query() spawns FLOWER_WRAPPER in place of
// Claude Code, in the workspace WS. Every message the SDK yields is
// printed as one JSON line; the last line is {"end": ...}.
import { query, createSdkMcpServer, tool } from '@anthropic-ai/claude-agent-sdk';
import { z } from 'zod';
import fs from 'node:fs';
import { spawn } from 'node:child_process';
import path from 'node:path';

const ws = process.env.WS;
const exe = process.env.FLOWER_WRAPPER;
const scenario = process.argv[2];
const out = (v) => process.stdout.write(JSON.stringify(v) + '\n');
const base = { pathToClaudeCodeExecutable: exe, cwd: ws, stderr: (d) => process.stderr.write(d) };

// messages yields user messages for streaming input: each waits for
// gate(i) before it is sent; the input stays open until hold resolves
// (control requests travel on it).
async function* messages(texts, gate, hold) {
  for (const [i, text] of texts.entries()) {
    if (gate) await gate(i);
    yield { type: 'user', session_id: '', parent_tool_use_id: null, message: { role: 'user', content: [{ type: 'text', text }] } };
  }
  if (hold) await hold;
}

async function drain(q, onMessage) {
  for await (const m of q) {
    out(m);
    if (onMessage) await onMessage(m);
  }
}

// waitFile resolves once file exists (the test's Bash commands create it).
function waitFile(file) {
  return new Promise((resolve) => {
    const t = setInterval(() => { if (fs.existsSync(file)) { clearInterval(t); resolve(); } }, 20);
  });
}

const scenarios = {
  // A multi-turn tool session from a string prompt.
  async session() {
    await drain(query({ prompt: 'write a.txt', options: base }));
  },
  // Two user messages queued on one process's input, answered in turn.
  async queued() {
    await drain(query({ prompt: messages(['first', 'second']), options: base }));
  },
  // The host's canUseTool denies Bash.
  async deny() {
    const asked = [];
    const canUseTool = async (name, input) => {
      asked.push({ name, input });
      return name === 'Bash' ? { behavior: 'deny', message: 'not here' } : { behavior: 'allow', updatedInput: input };
    };
    await drain(query({ prompt: 'run it', options: { ...base, canUseTool } }));
    out({ asked });
  },
  // A PreToolUse hook (hook_callback) allows one Bash call and denies
  // the rm.
  async hook() {
    const calls = [];
    const pre = async (input) => {
      calls.push({ tool: input.tool_name, command: input.tool_input.command, event: input.hook_event_name });
      const deny = input.tool_input.command.includes('rm ');
      return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: deny ? 'deny' : 'allow', permissionDecisionReason: 'no rm' } };
    };
    await drain(query({ prompt: 'tidy up', options: { ...base, hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [pre] }] } } }));
    out({ calls });
  },
  // An in-process MCP server of the host (createSdkMcpServer): flower
  // lists its tools and calls one over mcp_message.
  async sdkmcp() {
    const calls = [];
    const add = tool('add', 'Add two numbers', { a: z.number(), b: z.number() }, async ({ a, b }) => {
      calls.push([a, b]);
      return { content: [{ type: 'text', text: String(a + b) }] };
    });
    const server = createSdkMcpServer({ name: 'calc', version: '1.0.0', tools: [add] });
    let done;
    const finished = new Promise((r) => { done = r; });
    await drain(query({ prompt: messages(['add them'], null, finished), options: { ...base, mcpServers: { calc: server } } }),
      async (m) => { if (m.type === 'result') done(); });
    out({ calls });
  },
  // The host dies (SIGKILL) while flower's Bash call runs: flower loses
  // its input and output. Once it is gone, a new host resumes the session.
  async hostdies() {
    const child = spawn(process.execPath, [process.argv[1], 'hostdies-child'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let session = '';
    let buf = '';
    const toolSeen = new Promise((resolve) => {
      child.stdout.on('data', (d) => {
        buf += d;
        for (const line of buf.split('\n').slice(0, -1)) {
          const m = JSON.parse(line);
          if (m.session_id) session = m.session_id;
          if (m.type === 'assistant' && m.message.content.some((b) => b.type === 'tool_use')) resolve();
        }
        buf = buf.slice(buf.lastIndexOf('\n') + 1);
      });
    });
    await toolSeen;
    await waitFile(path.join(ws, 'started'));
    const pid = Number(fs.readFileSync(process.env.FLOWER_PIDFILE, 'utf8'));
    child.kill('SIGKILL');
    out({ hostKilled: true });
    fs.writeFileSync(path.join(ws, 'go'), ''); // the command may finish now
    await new Promise((resolve) => {
      const t = setInterval(() => { try { process.kill(pid, 0); } catch { clearInterval(t); resolve(); } }, 20);
    });
    out({ flowerGone: pid });
    await drain(query({ prompt: 'go on', options: { ...base, resume: session } }));
  },
  async 'hostdies-child'() {
    await drain(query({ prompt: 'append a line', options: base }));
  },
  // setPermissionMode('plan') between two messages: the second one's
  // effects do not run.
  async plan() {
    let q, first;
    const answered = new Promise((r) => { first = r; });
    const gate = async (i) => {
      if (i === 0) return;
      await answered;
      out({ setMode: (await q.setPermissionMode('plan')) ?? null });
    };
    let results = 0, last;
    const done = new Promise((r) => { last = r; });
    q = query({ prompt: messages(['hello', 'change things'], gate, done), options: base });
    await drain(q, async (m) => {
      if (m.type === 'result' && ++results === 1) first();
      if (m.type === 'result' && results === 2) last();
    });
  },
  // interrupt() while a tool runs: the run stops at the next message
  // boundary; the tool waits for the go file, made once the interrupt is in.
  // The interrupt waits for the command's started file: the assistant line
  // comes before the call starts, and an interrupt in between rightly cuts
  // the call before it runs.
  async interrupt() {
    let done;
    const finished = new Promise((r) => { done = r; });
    const q = query({ prompt: messages(['work'], null, finished), options: base });
    await drain(q, async (m) => {
      if (m.type === 'assistant' && m.message.content.some((b) => b.type === 'tool_use')) {
        await waitFile(path.join(ws, 'started'));
        await q.interrupt();
        fs.writeFileSync(path.join(ws, 'go'), '');
        out({ interrupted: true });
      }
      if (m.type === 'result') done();
    });
  },
  // The first flower is SIGKILLed while its Bash call runs; a second
  // query() resumes the session.
  async resume() {
    let session = '';
    try {
      await drain(query({ prompt: 'append a line', options: base }), async (m) => {
        if (m.session_id) session = m.session_id;
        if (m.type === 'assistant' && m.message.content.some((b) => b.type === 'tool_use')) {
          await waitFile(path.join(ws, 'started'));
          const pid = Number(fs.readFileSync(process.env.FLOWER_PIDFILE, 'utf8'));
          process.kill(pid, 'SIGKILL');
          out({ killed: pid });
        }
      });
    } catch (e) {
      out({ firstQueryError: String(e.message).slice(0, 200) });
    }
    await drain(query({ prompt: 'go on', options: { ...base, resume: session } }));
  },
};

try {
  await scenarios[scenario]();
  out({ end: 'ok' });
} catch (e) {
  out({ end: 'error', error: String(e && e.stack || e) });
}
