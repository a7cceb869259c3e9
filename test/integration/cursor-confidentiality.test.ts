import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalIssuer, startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { MODERN_META } from '@mcpgw/test-helpers/mcp-http';
import { buildTestApp } from '@mcpgw/test-helpers/gateway';

// Review finding 4: a cursor carries the source position of the last entry a
// page looked at, before the caller's grants filtered it. When cursors were
// only signed, a caller granted one folder read the other folder's file names
// out of its cursors. A narrowly granted caller walks every listing on both
// eras through the real gateway, and no byte of any response, nor of any
// cursor decoded from base64 or base64url, names what it may not see.

const PORT = 18_404;
const HIDDEN_FOLDER = 'vault-q7x';
const HIDDEN_FILE_PREFIX = 'canary-k3';
const HIDDEN_SOURCE = 'ledger-z9w';
// Enough hidden files that a page's ten source calls end inside the hidden folder.
const HIDDEN_FILES = 1_100;
const HIDDEN_NAMES = [HIDDEN_FOLDER, HIDDEN_FILE_PREFIX, HIDDEN_SOURCE];

let app: FastifyInstance;
let idp: LocalIssuer;
const endpoint = `http://127.0.0.1:${PORT}/t/acme/mcp`;

beforeAll(async () => {
  idp = await startLocalIssuer({ path: '/idp-cursor' });
  const dir = await mkdtemp(join(tmpdir(), 'gw-cursor-'));
  const root = join(dir, 'handbook');
  await mkdir(join(root, 'shared'), { recursive: true });
  await mkdir(join(root, HIDDEN_FOLDER), { recursive: true });
  for (const name of ['intro.md', 'faq.md', 'rules.txt']) await writeFile(join(root, 'shared', name), `# ${name}\n`);
  await Promise.all(
    Array.from({ length: HIDDEN_FILES }, (_, i) =>
      writeFile(join(root, HIDDEN_FOLDER, `${HIDDEN_FILE_PREFIX}-${String(i).padStart(4, '0')}.txt`), 'secret'),
    ),
  );
  const bootstrap = {
    tenants: [
      {
        id: 'acme',
        auth: { issuers: [{ issuer: idp.issuer, jwksUri: idp.jwksUri }], requiredScopes: ['mcp:read'] },
        grants: [
          {
            name: 'shared-only',
            match: {},
            // The second pattern has no literal start at all, so the
            // listing scans the whole folder and pages end inside the hidden one;
            // `shared/**` alone, or `file:///handbook/*/rules.txt` (one level
            // below the root, walked in one page that passes over what the
            // caller may not see), would be listed narrowed, in one page.
            allow: [{ source: 'handbook', uris: ['file:///handbook/shared/**', '**/rules.txt'] }],
          },
        ],
        sources: [
          { id: 'handbook', type: 'files', root: './handbook' },
          {
            id: HIDDEN_SOURCE,
            type: 'static',
            resources: [{ uri: `test://${HIDDEN_SOURCE}/a`, name: 'a', text: 'hidden' }],
          },
        ],
      },
    ],
  };
  await writeFile(join(dir, 'gateway.json'), JSON.stringify(bootstrap));
  ({ app } = await buildTestApp({
    env: {
      HOST: '127.0.0.1',
      PORT: String(PORT),
      GATEWAY_CONFIG: join(dir, 'gateway.json'),
      SECRETS_KEY: 'cursor-confidentiality-test-secret-0123456789',
    },
  }));
});

afterAll(async () => {
  await app?.close();
  await idp?.close();
});

type Era = 'modern' | 'legacy';

interface Exchange {
  raw: string;
  result: { resources?: Array<{ uri: string }>; resourceTemplates?: unknown[]; nextCursor?: string };
}

async function call(era: Era, token: string, method: string, params: Record<string, unknown>): Promise<Exchange> {
  const response = await app.inject({
    method: 'POST',
    url: '/t/acme/mcp',
    headers: {
      host: `127.0.0.1:${PORT}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
      ...(era === 'modern'
        ? { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method }
        : { 'mcp-protocol-version': '2025-11-25' }),
      ...(era === 'modern' && typeof params.uri === 'string'
        ? { 'mcp-name': `=?base64?${Buffer.from(params.uri).toString('base64')}?=` }
        : {}),
    },
    payload: {
      jsonrpc: '2.0',
      id: 1,
      method,
      params: era === 'modern' ? { ...params, _meta: MODERN_META } : params,
    },
  });
  expect(response.statusCode).toBe(200);
  const body = response.json() as { result?: Exchange['result']; error?: unknown };
  expect(body.error).toBeUndefined();
  return { raw: response.body, result: body.result ?? {} };
}

/** Every page of one listing, following `nextCursor`. */
async function walk(era: Era, token: string, method: string): Promise<{ raws: string[]; cursors: string[] }> {
  const raws: string[] = [];
  const cursors: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 50; pages += 1) {
    const { raw, result } = await call(era, token, method, cursor === undefined ? {} : { cursor });
    raws.push(raw);
    cursor = result.nextCursor;
    if (cursor === undefined) return { raws, cursors };
    cursors.push(cursor);
  }
  throw new Error(`${method} did not end within 50 pages`);
}

/**
 * Everything a cursor could be read as: the text itself, and the bytes of it
 * and of each of its pieces decoded as base64url and as base64.
 */
function readings(cursor: string): Buffer[] {
  const pieces = [cursor, ...cursor.split(/[^A-Za-z0-9+/_=-]+/).filter((piece) => piece.length > 0)];
  return [
    Buffer.from(cursor, 'utf8'),
    ...pieces.flatMap((piece) => [Buffer.from(piece, 'base64url'), Buffer.from(piece, 'base64')]),
  ];
}

function expectNoHiddenName(bytes: Buffer, where: string): void {
  for (const name of HIDDEN_NAMES) {
    for (const encoding of ['utf8', 'latin1', 'utf16le'] as const) {
      if (bytes.includes(Buffer.from(name, encoding))) {
        throw new Error(`${where} reveals the hidden name ${name} (${encoding})`);
      }
    }
  }
}

describe('a caller granted one folder of a files source', () => {
  it('finds no hidden name in any response or cursor, on either era', async () => {
    const token = await idp.token({ aud: endpoint, scope: 'mcp:read' });
    let cursorCount = 0;
    const listed: string[] = [];
    for (const era of ['modern', 'legacy'] as const) {
      for (const method of ['resources/list', 'resources/templates/list']) {
        const { raws, cursors } = await walk(era, token, method);
        for (const raw of raws) {
          expectNoHiddenName(Buffer.from(raw, 'utf8'), `${era} ${method} response`);
          const result = (JSON.parse(raw) as { result: Exchange['result'] }).result;
          listed.push(...(result.resources ?? []).map((r) => r.uri));
        }
        for (const cursor of cursors) {
          for (const reading of readings(cursor)) expectNoHiddenName(reading, `${era} ${method} cursor`);
        }
        cursorCount += cursors.length;
      }
    }
    // The premise: the listing really did end a page inside the hidden folder,
    // and the caller saw its own files (on both eras).
    expect(cursorCount).toBeGreaterThanOrEqual(2);
    expect(new Set(listed)).toEqual(
      new Set([
        'file:///handbook/shared/',
        'file:///handbook/shared/faq.md',
        'file:///handbook/shared/intro.md',
        'file:///handbook/shared/rules.txt',
      ]),
    );

    for (const uri of new Set(listed)) {
      const { raw } = await call('modern', token, 'resources/read', { uri });
      expectNoHiddenName(Buffer.from(raw, 'utf8'), `read of ${uri}`);
    }
  });
});
