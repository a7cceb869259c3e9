import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '@mcpgw/test-helpers/free-port';
import type { LocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { previewResponseSchema } from '@mcpgw/admin';
import { runAdminCli } from '../src/admin-cli.js';
import { type PreviewFixture, startPreviewFixture } from './admin-preview-fixture.js';
import { ADMIN_CLI, runBuilt } from './gateway-process.js';

// `npm run admin -- preview` against a running gateway serving the admin API
// (admin-preview-fixture.ts): in process, and as the built script.

let fixture: PreviewFixture;
let baseUrl: string;
let idpAcme: LocalIssuer;
let idpGlobex: LocalIssuer;
const resource = (tenant: string) => fixture.resource(tenant);
const operatorToken = () => fixture.operatorToken();
const acmeAdminToken = () => fixture.acmeAdminToken();

beforeAll(async () => {
  fixture = await startPreviewFixture();
  ({ baseUrl, idpAcme, idpGlobex } = fixture);
});
afterAll(() => fixture?.close());

describe('npm run admin -- preview', () => {
  async function cli(argv: string[], adminToken: string | undefined, stdin = '') {
    let out = '';
    let err = '';
    const code = await runAdminCli(argv, {
      defaultUrl: () => baseUrl,
      adminToken,
      readStdin: () => stdin,
      out: (text) => (out += text),
      err: (text) => (err += text),
    });
    return { code, out, err };
  }

  it('prints a readable summary, or the JSON answer with --json', async () => {
    const claims = JSON.stringify({ sub: 'dan', scope: 'mcp:read', groups: ['eng'] });
    const summary = await cli(['preview', '--tenant', 'acme', '--claims', claims], await operatorToken());
    expect(summary).toMatchObject({ code: 0, err: '' });
    expect(summary.out).toContain(`Tenant acme, as dan of ${idpAcme.issuer} (from claims)`);
    expect(summary.out).toContain('Admitted: yes');
    expect(summary.out).toContain('Grants matched: readers, engineering');
    expect(summary.out).toContain('Resources, first page: 100 (more pages follow)');
    expect(summary.out).toContain(
      "! grant engineering, source handbook: No resource the source currently lists matches 'file:///handbook/archive/**'",
    );

    const token = await idpAcme.token({ aud: resource('acme'), sub: 'bob', scope: 'mcp:read' });
    const json = await cli(
      ['preview', '--tenant', 'acme', '--token', '-', '--json'],
      await operatorToken(),
      `${token}\n`,
    );
    expect(json.code).toBe(0);
    expect(previewResponseSchema.parse(JSON.parse(json.out))).toMatchObject({
      from: 'token',
      principal: { subject: 'bob' },
    });
  });

  it('runs as `npm run admin` does: the built script, the operator token from ADMIN_TOKEN, the gateway at PORT', async () => {
    const run = runBuilt(ADMIN_CLI, ['preview', '--tenant', 'globex', '--claims', '{"sub":"x"}'], {
      env: { ADMIN_TOKEN: await operatorToken(), PORT: new URL(baseUrl).port },
      killAfterMs: 30_000,
    });
    const exit = await run.exited;
    expect(exit, exit.stderr).toMatchObject({ code: 0, stderr: '' });
    expect(exit.stdout).toContain(`Tenant globex, as x of ${idpGlobex.issuer} (from claims)`);
    expect(exit.stdout).toContain('Grants matched: everyone');
    const help = await runBuilt(ADMIN_CLI, ['--help'], { env: {} }).exited;
    expect(help).toMatchObject({ code: 0 });
    expect(help.stdout).toMatch(/^usage: npm run admin -- preview --tenant ID/);
  });

  it('exits 1 with the problem when the gateway refuses, 2 on a usage mistake', async () => {
    const refused = await cli(['preview', '--tenant', 'globex', '--claims', '{"sub":"x"}'], await acmeAdminToken());
    expect(refused).toMatchObject({ code: 1, out: '' });
    expect(refused.err).toBe('admin: HTTP 404 Not found: No such tenant, or not one you administer\n');
    const expired = await cli(['preview', '--tenant', 'acme', '--token', 'not-a-jwt'], await operatorToken());
    expect(expired.code).toBe(1);
    expect(expired.err).toMatch(
      /^admin: HTTP 422 The request content is invalid: The tenant refuses this token: .*\n {2}\/token: /,
    );

    expect((await cli(['preview', '--tenant', 'acme', '--claims', '{"sub":"x"}'], undefined)).code).toBe(2);
    expect((await cli(['preview', '--tenant', 'acme'], 'x')).err).toContain('give exactly one of --claims or --token');
    expect((await cli(['preview', '--tenant', 'acme', '--claims', '{oops'], 'x')).err).toContain(
      '--claims is not JSON',
    );
    expect((await cli(['delete', '--tenant', 'acme'], 'x')).err).toContain("unknown command 'delete'");
    const unreachable = await runAdminCli(
      ['preview', '--tenant', 'acme', '--claims', '{}', '--url', `http://127.0.0.1:${await freePort()}`],
      {
        defaultUrl: () => baseUrl,
        adminToken: 'x',
        readStdin: () => '',
        out: () => undefined,
        err: () => undefined,
      },
    );
    expect(unreachable).toBe(1);
  });
});
