// End-to-end test of `forgemem mcp` as an agent uses it: the official
// TypeScript MCP SDK client starts the built binary over stdio
// (StdioClientTransport), lists its tools and calls them.
//
// Run by the Go test TestMCPWithTheTypeScriptClient in tools/e2e,
// which builds the binary and passes its path in MCP_E2E_BINARY:
//
//   MCP_E2E_BINARY=/path/to/forgemem node --test
//
// Each run works in a new temporary repository and home folder, with the
// offline fake provider (the hashing embedder, identity retrieval).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const binary = process.env.MCP_E2E_BINARY;

/** The text of a tool result. */
function text(result) {
  return result.content.filter((c) => c.type === 'text').map((c) => c.text).join('');
}

/** Connects a client to a new forgemem mcp in a new repository. */
async function connect(t) {
  const root = mkdtempSync(join(tmpdir(), 'forgemem-mcptest-'));
  const repo = join(root, 'repo');
  const home = join(root, 'home');
  mkdirSync(join(repo, '.git'), { recursive: true });
  mkdirSync(home, { recursive: true });
  const transport = new StdioClientTransport({
    command: binary,
    args: ['mcp'],
    cwd: repo,
    // Review off: what the client remembers is in force at once, for the
    // tool flows below (under the default review an agent's memory waits
    // for the user; cmd/forgemem tests that).
    env: { HOME: home, PATH: process.env.PATH ?? '', FORGEMEM_REVIEW: 'off' },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr.on('data', (chunk) => { stderr += chunk; });
  const client = new Client({ name: 'forgemem-mcptest', version: '0.1.0' });
  await client.connect(transport);
  t.after(async () => {
    await client.close();
    rmSync(root, { recursive: true, force: true });
  });
  return { client, repo, home, stderr: () => stderr };
}

/** Calls a tool that must succeed, and returns its text and structured content. */
async function ok(client, name, args) {
  const result = await client.callTool({ name, arguments: args });
  assert.equal(result.isError ?? false, false, `${name} failed: ${text(result)}`);
  return { text: text(result), structured: result.structuredContent };
}

test('forgemem mcp with the TypeScript SDK client', { timeout: 120_000 }, async (t) => {
  assert.ok(binary, 'MCP_E2E_BINARY names the forgemem binary to test');
  const { client, repo, stderr } = await connect(t);

  await t.test('the server says who it is', () => {
    assert.equal(client.getServerVersion().name, 'forgemem');
    assert.match(client.getInstructions() ?? '', /memory_recall/);
  });

  await t.test('lists the six tools with schemas and descriptions', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name).sort();
    assert.deepEqual(names, ['memory_forget', 'memory_list', 'memory_recall', 'memory_remember', 'memory_search', 'memory_show']);
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, 'object', tool.name);
      assert.ok(tool.description.length > 100, `${tool.name} has a description for a model`);
    }
    const remember = tools.find((tool) => tool.name === 'memory_remember');
    assert.deepEqual([...remember.inputSchema.required].sort(), ['category', 'content', 'scope']);
    assert.deepEqual(remember.inputSchema.properties.scope.enum, ['repo', 'user']);
    assert.equal(remember.inputSchema.properties.category.enum.length, 6);
    const search = tools.find((tool) => tool.name === 'memory_search');
    assert.deepEqual(search.inputSchema.required, ['query']);
  });

  let first;
  let second;
  await t.test('remembers, searches and recalls', async () => {
    const r = await ok(client, 'memory_remember', {
      content: 'Use pessimistic locking (SELECT FOR UPDATE) for user updates.',
      scope: 'repo', category: 'architectural-decisions',
    });
    first = r.structured.memory.id;
    assert.match(first, /^mem_[0-9a-f-]{36}$/);
    assert.match(r.text, new RegExp(`Remembered as ${first} \\(repo/architectural-decisions, version 1\\)`));
    const file = readFileSync(r.structured.memory.path, 'utf8');
    assert.match(file, /trigger: manual/);
    assert.ok(r.structured.memory.path.startsWith(join(repo, '.forge', 'memory')));

    await ok(client, 'memory_remember', { content: 'Prefers table-driven tests.', scope: 'user', category: 'coding-preferences' });

    const s = await ok(client, 'memory_search', { query: 'locking user updates', limit: 5 });
    assert.equal(s.structured.hits[0].memory.id, first);
    assert.match(s.text, new RegExp(`1\\. ${first} \\(relevance [0-9.]+, strong; repo/architectural-decisions, version 1\\)`));

    const rc = await ok(client, 'memory_recall', { query: 'How should user updates lock rows?' });
    assert.match(rc.text, /<recalled_memories>/);
    assert.match(rc.text, /pessimistic locking/);
    assert.equal(rc.structured.ids[0], first);
  });

  await t.test('supersedes and shows the history', async () => {
    const r = await ok(client, 'memory_remember', {
      content: 'Use optimistic locking with a version column for user updates: row locks caused timeouts.',
      scope: 'repo', category: 'architectural-decisions', supersedes: first,
    });
    second = r.structured.memory.id;
    assert.equal(r.structured.memory.version, 2);
    assert.equal(r.structured.superseded, first);

    const sh = await ok(client, 'memory_show', { id: second.slice(0, 12) });
    assert.equal(sh.structured.chain.length, 2);
    assert.deepEqual(sh.structured.chain.map((m) => m.id), [first, second]);
    assert.match(sh.text, /Version history, oldest first:/);
    assert.match(sh.text, /SELECT FOR UPDATE/);

    const rc = await ok(client, 'memory_recall', { query: 'How should user updates lock rows?' });
    assert.match(rc.text, /optimistic locking/);
    assert.match(rc.text, /version 2/);
  });

  await t.test('forgets', async () => {
    const f = await ok(client, 'memory_forget', { id: second, reason: 'moved to an event log' });
    assert.match(f.text, new RegExp(`Forgot ${second}`));
    const l = await ok(client, 'memory_list', {});
    assert.equal(l.structured.memories.length, 1);
    assert.equal(l.structured.hidden_forgotten, 1);
    assert.doesNotMatch(l.text, /locking/);
    const s = await ok(client, 'memory_search', { query: 'optimistic locking user updates' });
    assert.ok(!s.structured.hits.some((h) => h.memory.id === second || h.memory.id === first));
    const sh = await ok(client, 'memory_show', { id: second });
    assert.match(sh.text, /Status: forgotten; it is not recalled, searched or listed\. Why it was forgotten: moved to an event log\./);
  });

  await t.test('bad input is a tool error a model can act on, never a protocol error', async () => {
    const cases = [
      ['memory_remember', { content: 'x', scope: 'repo', category: 'opinions' }, /category/],
      ['memory_remember', { content: '   ', scope: 'repo', category: 'patterns' }, /the text to remember is empty/],
      ['memory_remember', { content: 'x', scope: 'team', category: 'patterns' }, /scope/],
      ['memory_remember', { content: 'Prefers TABLE-DRIVEN tests.', scope: 'user', category: 'coding-preferences' }, /already remembered/],
      ['memory_show', { id: 'mem_does-not-exist' }, /no memory has the id/],
      ['memory_forget', { id: 'nothing' }, /no memory has the id nothing/],
      ['memory_show', {}, /missing properties/],
      ['memory_search', { query: 'x', limit: 'ten' }, /limit/],
      ['memory_search', { query: '' }, /the search text is empty/],
      ['memory_list', { category: 'misc' }, /category/],
    ];
    for (const [name, args, want] of cases) {
      const result = await client.callTool({ name, arguments: args });
      assert.equal(result.isError, true, `${name}(${JSON.stringify(args)}) must be a tool error: ${text(result)}`);
      assert.match(text(result), want, `${name}(${JSON.stringify(args)})`);
    }
  });

  await t.test('logs go to stderr', () => {
    assert.match(stderr(), /forgemem mcp: serving the memories of/);
  });
});
