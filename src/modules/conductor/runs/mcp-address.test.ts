import { describe, expect, it } from 'vitest';
import { mcpLiteralProblem, refusePrivateMcp } from './mcp-address.ts';

describe('where a tenant MCP server may be', () => {
  it('names the first URL that is an internal address as written, with its field', () => {
    expect(mcpLiteralProblem([{ url: 'https://mcp.example.com/mcp', field: 'mcpServers.0.url' }])).toBeUndefined();
    expect(mcpLiteralProblem([{ url: 'https://mcp.example.com/mcp', field: 'a' }, { url: 'http://169.254.169.254/x', field: 'b' }])).toBe(
      'b: 169.254.169.254 is an internal address; MCP servers go to public addresses',
    );
    expect(mcpLiteralProblem([{ url: 'http://localhost:8080/mcp', field: 'f' }])).toBe('f: localhost is an internal address; MCP servers go to public addresses');
  });

  it('refuses a server whose name resolves to an internal address, or cannot be resolved, naming the server and the setting', async () => {
    const dns = async (host: string) => (host === 'inside.example' ? [{ address: '10.0.0.5' }] : host === 'outside.example' ? [{ address: '93.184.216.34' }] : Promise.reject(new Error(`getaddrinfo ENOTFOUND ${host}`)));
    await expect(refusePrivateMcp([{ name: 'pub', url: 'https://outside.example/mcp' }], dns)).resolves.toBeUndefined();
    await expect(refusePrivateMcp([{ name: 'pub', url: 'https://outside.example/mcp' }, { name: 'docs', url: 'http://inside.example/mcp' }], dns)).rejects.toMatchObject({
      status: 400,
      message: 'MCP server "docs": inside.example resolves to the internal address 10.0.0.5; MCP servers go to public addresses; the operator may allow it with SVC_PRIVATE_MCP=allow',
    });
    await expect(refusePrivateMcp([{ name: 'gone', url: 'http://nowhere.example/mcp' }], dns)).rejects.toMatchObject({ status: 400, message: expect.stringContaining('MCP server "gone": its host could not be resolved (getaddrinfo ENOTFOUND nowhere.example)') });
  });
});
