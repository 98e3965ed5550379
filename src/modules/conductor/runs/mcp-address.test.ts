import { describe, expect, it } from 'vitest';
import { POLICY_NOTE } from '../../../shared/egress/index.ts';
import { mcpUrlProblem, refusePrivateMcp } from './mcp-address.ts';

describe('where a tenant MCP server may be', () => {
  it('names the first URL the address policy refuses as written, with its field', () => {
    expect(mcpUrlProblem([{ url: 'https://mcp.example.com/mcp', field: 'mcpServers.0.url' }], 'deny')).toBeUndefined();
    expect(mcpUrlProblem([{ url: 'https://mcp.example.com/mcp', field: 'a' }, { url: 'http://169.254.169.254/x', field: 'b' }], 'deny')).toBe(`b: 169.254.169.254 is a link-local address; ${POLICY_NOTE}`);
    expect(mcpUrlProblem([{ url: 'http://[64:ff9b::7f00:1]/mcp', field: 'f' }], 'deny')).toBe(`f: 64:ff9b::7f00:1 is 127.0.0.1 (NAT64), a loopback address; ${POLICY_NOTE}`);
    expect(mcpUrlProblem([{ url: 'http://localhost:8080/mcp', field: 'f' }], 'allow')).toBeUndefined();
  });

  it('refuses a server whose name resolves to an internal address, or cannot be resolved, naming the server', async () => {
    const dns = async (host: string) =>
      host === 'inside.example' ? [{ address: '10.0.0.5', family: 4 }] : host === 'outside.example' ? [{ address: '93.184.216.34', family: 4 }] : Promise.reject(new Error(`getaddrinfo ENOTFOUND ${host}`));
    await expect(refusePrivateMcp([{ name: 'pub', url: 'https://outside.example/mcp' }], 'deny', dns)).resolves.toBeUndefined();
    await expect(refusePrivateMcp([{ name: 'pub', url: 'https://outside.example/mcp' }, { name: 'docs', url: 'http://inside.example/mcp' }], 'deny', dns)).rejects.toMatchObject({
      status: 400,
      message: `MCP server "docs": inside.example resolves to 10.0.0.5, a private address; ${POLICY_NOTE}`,
    });
    await expect(refusePrivateMcp([{ name: 'gone', url: 'http://nowhere.example/mcp' }], 'deny', dns)).rejects.toMatchObject({ status: 400, message: 'MCP server "gone": nowhere.example could not be resolved (getaddrinfo ENOTFOUND nowhere.example)' });
    await expect(refusePrivateMcp([{ name: 'docs', url: 'http://inside.example/mcp' }], 'allow', dns)).resolves.toBeUndefined();
  });
});
