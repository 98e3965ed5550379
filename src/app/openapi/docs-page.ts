/**
 * `GET /docs`: the API reference as one self-contained HTML page rendered from the OpenAPI document (no script, no
 * CDN): operations grouped by family, each with its path parameters, request body schema, answer schema and errors.
 */
const esc = (s: string) => s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);

interface Op {
  tags?: string[];
  summary?: string;
  description?: string;
  parameters?: Array<{ name: string; in: string; required?: boolean }>;
  requestBody?: { content: Record<string, { schema?: unknown }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: unknown }> }>;
}

export function docsPage(spec: { info: { title: string; version: string; description?: string }; paths: Record<string, Record<string, Op>> }): string {
  const groups = new Map<string, string[]>();
  for (const [path, methods] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const tag = op.tags?.[0] ?? 'other';
      const params = (op.parameters ?? []).map((p) => `<code>${esc(p.name)}</code> (${esc(p.in)}${p.required ? ', required' : ''})`).join(', ');
      const body = op.requestBody?.content['application/json']?.schema;
      const answers = Object.entries(op.responses ?? {});
      const success = answers.find(([status]) => /^[23]/.test(status));
      const media = Object.keys(success?.[1].content ?? {})[0];
      const answer = success?.[1].content?.['application/json']?.schema;
      const errors = answers.filter(([status]) => /^[45]/.test(status)).map(([status, r]) => `<code title="${esc(r.description ?? '')}">${esc(status)}</code>`);
      const html = `<section id="${esc(method + path)}"><h3><span class="m ${esc(method)}">${esc(method.toUpperCase())}</span> <code>${esc(path)}</code></h3>${
        op.summary ? `<p>${esc(op.summary)}</p>` : ''
      }${op.description ? `<p>${esc(op.description)}</p>` : ''}${params ? `<p>Parameters: ${params}</p>` : ''}${
        body ? `<details><summary>Request body (JSON)</summary><pre>${esc(JSON.stringify(body, null, 2))}</pre></details>` : ''
      }${success ? `<p>Answers <code>${esc(success[0])}</code>${media && media !== 'application/json' ? ` with <code>${esc(media)}</code>` : ''}${errors.length ? `; errors ${errors.join(', ')}` : ''}.</p>` : ''}${
        answer ? `<details><summary>Answer (JSON)</summary><pre>${esc(JSON.stringify(answer, null, 2))}</pre></details>` : ''
      }</section>`;
      (groups.get(tag) ?? groups.set(tag, []).get(tag)!).push(html);
    }
  }
  const toc = [...groups.keys()].map((t) => `<li><a href="#${esc(t)}">/${esc(t)}</a> (${groups.get(t)!.length})</li>`).join('');
  const sections = [...groups.entries()].map(([t, ops]) => `<h2 id="${esc(t)}">/${esc(t)}</h2>${ops.join('')}`).join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${esc(spec.info.title)} API reference</title><style>
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1b1b1f}h3{font-size:1rem;margin:1.2rem 0 .2rem}
code,pre{font:13px ui-monospace,monospace}pre{background:#f4f4f6;padding:.6rem;overflow:auto}section{border-top:1px solid #e4e4e8}
.m{display:inline-block;min-width:4.2rem;text-align:center;border-radius:3px;color:#fff;font-size:12px;padding:1px 4px}
.get{background:#2f6fdd}.post{background:#1d9a5b}.put,.patch{background:#b7791f}.delete{background:#c53030}
</style></head><body><h1>${esc(spec.info.title)} API reference <small>${esc(spec.info.version)}</small></h1><p>${esc(spec.info.description ?? '')}</p>
<p>The machine-readable document: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1). Authenticate with <code>Authorization: Bearer &lt;key&gt;</code>.</p>
<ul>${toc}</ul>${sections}</body></html>`;
}
