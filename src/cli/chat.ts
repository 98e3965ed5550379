import { createInterface } from 'node:readline/promises';
import { defineCommand } from 'citty';
import { globalArgs } from './args.ts';
import { authError, failure } from './client/exit.ts';
import { openSession } from './client/session.ts';

/** The owner's approval a call waits for (`approvals: "owner"`): the tool, and when the wait expires. */
function waitingLine(d: Record<string, any>): string {
  const until = typeof d.expiresAt === 'string' && !Number.isNaN(Date.parse(d.expiresAt)) ? ` (until ${new Date(d.expiresAt).toISOString().slice(0, 16).replace('T', ' ')} UTC)` : '';
  return `${d.message ?? `waiting for the agent's owner to approve a call to ${d.toolName ?? 'a tool'}`}${until}…`;
}

/** The owner decided (or the wait expired): the reply goes on, with the tool's result or without it. */
function resumedLine(d: Record<string, any>): string {
  const tool = d.toolName ?? 'the tool';
  if (d.decision === 'approve') return `  approved by the owner: ${tool} runs and the reply goes on`;
  if (d.decision === 'deny') return d.reason === 'expired' ? `  the approval expired: the reply goes on without ${tool}` : `  not approved by the owner: the reply goes on without ${tool}`;
  return '  the reply goes on';
}

/**
 * `svc chat <slug> [message]`: talks to a published agent through the chat gateway (`POST /chat/<slug>`, streamed),
 * printing the reply as it arrives. Without a message it is a REPL that keeps one conversation. `--key` is the agent
 * key (pk_…), or SVC_AGENT_KEY; a public agent needs none. The gateway is the context's API URL unless --gateway.
 * A reply waiting on the owner's approval of a call (`waiting` … `resumed`) is said on stderr; `--json` prints every
 * event as a JSON line instead.
 */
export default defineCommand({
  meta: { name: 'chat', description: 'Chat with a published agent' },
  args: {
    ...globalArgs,
    slug: { type: 'positional', description: "the published agent's slug (or its profile's name, with an API key)", required: true },
    message: { type: 'positional', description: 'One message (omit for a REPL)', required: false },
    key: { type: 'string', description: 'Agent key (pk_…); default SVC_AGENT_KEY' },
    gateway: { type: 'string', description: 'Gateway base URL (default: the API URL)' },
  },
  async run({ args }) {
    const { out, api, ctx, env } = openSession(args, { allowAbsent: true });
    const key = args.key ?? process.env.SVC_AGENT_KEY;
    const base = (args.gateway ?? api.baseUrl).replace(/\/+$/, '');
    let slug = args.slug;
    let conversationId: string | undefined;

    /** A profile's name where a slug was expected: with an API key, the slug it is published under. */
    const slugOfProfile = async (): Promise<string | undefined> => {
      if (!ctx.apiKey || slug !== args.slug) return undefined;
      const published = await api.get<{ slug: string }>(`/api/profiles/${encodeURIComponent(args.slug)}/published`).catch(() => undefined);
      return published?.slug !== args.slug ? published?.slug : undefined;
    };

    const turn = async (message: string): Promise<void> => {
      const res = await fetch(`${base}/chat/${encodeURIComponent(slug)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...(key ? { authorization: `Bearer ${key}` } : {}) },
        body: JSON.stringify(conversationId ? { message, conversationId } : { message }),
      });
      if (res.status === 404) {
        const other = await slugOfProfile();
        if (other) {
          await res.body?.cancel();
          slug = other;
          return turn(message);
        }
      }
      if (!res.ok || !res.body) {
        const err = (await res.json().catch(() => ({}))) as { error?: string; message?: string };
        const message = `chat ${slug}: ${res.status} ${err.message ?? err.error ?? res.statusText}`;
        throw res.status === 401 ? authError(message, 'pass an agent key of this agent with --key pk_… (or SVC_AGENT_KEY)') : failure(message);
      }
      let buf = '';
      let ok = true;
      let midLine = false; // reply text on stdout not ended by a newline
      /** A status line on stderr; in a terminal it starts on a line of its own, piped stdout keeps only the reply. */
      const status = (line: string) => {
        if (midLine && env.stdoutTTY) {
          out.write('\n');
          midLine = false;
        }
        process.stderr.write(line + '\n');
      };
      for await (const chunk of res.body.pipeThrough(new TextDecoderStream())) {
        buf += chunk;
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
          if (!event || !data) continue;
          const d = JSON.parse(data) as Record<string, any>;
          if (out.json) out.line({ event, ...d });
          else if (event === 'delta') {
            out.write(d.text);
            midLine = !String(d.text).endsWith('\n');
          }
          else if (event === 'done') out.write('\n');
          else if (event === 'waiting') status(waitingLine(d));
          else if (event === 'resumed') status(out.dim(resumedLine(d)));
          else if (event === 'error') {
            out.log.error(d.error);
            ok = false;
          }
          if (event === 'conversation') conversationId = d.conversationId;
        }
      }
      if (!ok) throw failure(`chat ${slug}: the reply failed`);
    };

    if (args.message) return void (await turn(args.message));
    // a person at a terminal gets a prompt and is told how to leave; piped input stays quiet (scripts)
    const person = process.stdin.isTTY === true;
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: person });
    if (person) {
      process.stderr.write(`Chatting with ${args.slug}. Type a message and press Enter; Ctrl-D or /exit leaves.\n`);
      rl.setPrompt('you> ');
      rl.prompt();
    }
    for await (const line of rl) {
      const text = line.trim();
      if (text === '/exit' || text === '/quit') break;
      // in the REPL a failed turn is reported and the conversation goes on
      if (text) await turn(text).catch((err: Error) => out.log.error(err.message));
      if (person) rl.prompt();
    }
    rl.close();
  },
});
