/**
 * The source of a minimal stdio MCP server (newline-delimited JSON-RPC) for the system's `node`, to seed into a
 * session's workspace: it answers `initialize` and `tools/list` with `tools`, and `tools/call` with `call`, the body
 * of a JavaScript function of `(msg, answer)` that calls `answer(text)` (sync or later). `prelude` runs first (a
 * `require`, say). Anything else is a JSON-RPC "no such method".
 */
export function stdioMcpServer(o: { name: string; tools: Array<{ name: string; description: string; properties?: Record<string, unknown> }>; call: string; prelude?: string }): string {
  const tools = o.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: { type: 'object', properties: t.properties ?? {} } }));
  return `
${o.prelude ?? ''}
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
const call = (msg, answer) => { ${o.call} };
require('readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const msg = JSON.parse(line);
  if (msg.id === undefined) return;
  if (msg.method === 'initialize') return send({ jsonrpc: '2.0', id: msg.id, result: { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: ${JSON.stringify(o.name)}, version: '1.0.0' } } });
  if (msg.method === 'tools/list') return send({ jsonrpc: '2.0', id: msg.id, result: { tools: ${JSON.stringify(tools)} } });
  if (msg.method === 'tools/call') return call(msg, (text) => send({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text }] } }));
  send({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'no such method' } });
});`;
}
